// Runs the real svc_ctl (its TypeScript entry, no build) as a child process against a test node's
// management port, and collects its exit code and output. Asynchronous: the node answers from this
// same process.

import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import type { TestNode } from "../helpers/node.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ENTRY = "src/cli/svc-ctl.ts";

export interface CtlResult {
  code: number;
  stdout: string;
  stderr: string;
  lines: string[];
}

/** Environment without SVC_ variables (they would reconfigure the tool). */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith("SVC_")) env[k] = v;
  return { ...env, ...extra };
}

export function run(args: string[], env: Record<string, string> = {}): Promise<CtlResult> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ["--experimental-transform-types", "--no-warnings", ENTRY, ...args],
      { cwd: ROOT, env: cleanEnv(env), timeout: 30_000 },
      (err, stdout, stderr) => {
        const code = err === null ? 0 : typeof err.code === "number" ? err.code : -1;
        resolve({ code, stdout, stderr, lines: stdout.split("\n").filter((l) => l !== "") });
      },
    );
  });
}

/** svc_ctl against `node`'s `management.listener.http` port. */
export function ctl(node: TestNode, ...args: string[]): Promise<CtlResult> {
  return run([...args, "--host", "127.0.0.1", "--port", String(node.managementPort("http"))]);
}
