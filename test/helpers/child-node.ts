// Runs a svc node in a child process from the TypeScript sources (Node's type transform), for
// tests that must kill a node the hard way (SIGKILL). Every listener on port 0; the bound MQTT port
// is read from the node's own "listener started" log line.

import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface ChildNode {
  readonly proc: ChildProcess;
  readonly tcpPort: number;
  /** Everything the node logged so far (JSON lines). */
  output(): string;
  /** Bound port of the `http` management listener, as last logged (it changes on a restart). */
  apiPort(): number | undefined;
  /** SIGKILL: no DISCONNECT, no deregistration. */
  kill(): Promise<void>;
  /** Removes the data dir (after kill). */
  cleanup(): void;
}

const live = new Set<ChildProcess>();
process.on("exit", () => {
  for (const p of live) p.kill("SIGKILL");
});

/**
 * `nofile`: the child's soft limit of open file descriptors (set by the shell that execs it);
 * `env`: variables added to this process's environment.
 */
export async function startChildNode(
  set: Record<string, string>,
  opts: { nofile?: number; env?: Record<string, string> } = {},
): Promise<ChildNode> {
  const dataDir = mkdtempSync(join(tmpdir(), "svc-child-"));
  const all: Record<string, string> = {
    "node.data_dir": dataDir,
    "log.level": "info",
    "listener.tcp.external": "127.0.0.1:0",
    "listener.ssl.external": "off",
    "listener.ws.external": "off",
    "listener.wss.external": "off",
    "management.listener.http": "127.0.0.1:0",
    "management.listener.http_v2": "127.0.0.1:0",
    ...set,
  };
  const args = ["--experimental-transform-types", "--no-warnings", "src/cli/svc.ts", "start"];
  for (const [k, v] of Object.entries(all)) args.push("--set", `${k}=${v}`);
  const [cmd, argv] =
    opts.nofile === undefined
      ? [process.execPath, args]
      : ["sh", ["-c", `ulimit -n ${opts.nofile} && exec "$0" "$@"`, process.execPath, ...args]];
  const proc = spawn(cmd, argv, {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, SVC_CONFIG: "", ...opts.env },
  });
  live.add(proc);
  let out = "";
  const tcpPort = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`child node did not start: ${out}`)), 30_000);
    proc.stdout?.on("data", (d: Buffer) => {
      out += d.toString();
      const m = /"listener":"mqtt:tcp:external","host":"[^"]+","port":(\d+)/.exec(out);
      if (m !== null) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
    proc.stderr?.on("data", (d: Buffer) => {
      out += d.toString();
    });
    proc.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`child node exited with ${code}: ${out}`));
    });
  });
  proc.stdout?.resume();
  return {
    proc,
    tcpPort,
    output: () => out,
    apiPort: () => {
      const all = [...out.matchAll(/"listener":"http:management:http","host":"[^"]+","port":(\d+)/g)];
      const last = all.at(-1);
      return last === undefined ? undefined : Number(last[1]);
    },
    kill: () =>
      new Promise<void>((resolve) => {
        if (proc.exitCode !== null || proc.signalCode !== null) return resolve();
        proc.once("exit", () => resolve());
        proc.kill("SIGKILL");
        live.delete(proc);
      }),
    cleanup: () => rmSync(dataDir, { recursive: true, force: true }),
  };
}
