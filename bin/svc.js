#!/usr/bin/env node
// Entry of the `svc` command: runs the compiled CLI.
import "../dist/cli/svc.js";
