#!/usr/bin/env node
// Entry of the `svc_ctl` command: runs the compiled command-line tool.
import "../dist/cli/svc-ctl.js";
