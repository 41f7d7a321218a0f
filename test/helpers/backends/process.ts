// What the database back ends of the tests share (redis.ts, postgres.ts, mariadb.ts): finding a
// binary, a server process in its own process group (stopped with a signal and waited for,
// paused with SIGSTOP to play a server that accepts connections but never answers), and the
// describe wrapper that skips with one loud line when the server is not installed, except under
// CI (`process.env.CI`), where a missing server is a failing test.

import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { delimiter, join } from "node:path";
import { describe, it } from "vitest";

export { freePort } from "../etcd.ts";

/** A database server on 127.0.0.1 for tests. */
export interface BackendServer {
  readonly host: string;
  readonly port: number;
  /** Stops the server (connections are cut), keeping its data and port. */
  stop(): Promise<void>;
  /** Starts a stopped server again on the same port with the same data. */
  start(): Promise<void>;
  /** Freezes the server (SIGSTOP): connections are accepted, nothing is answered. */
  pause(): void;
  resume(): void;
  /** Stops the server and removes its data. */
  close(): Promise<void>;
}

/**
 * A BackendServer over a server process `run` starts (already running as `first`): stop() ends
 * it with `stopSignal` keeping its data and port, start() runs it again, close() ends it with
 * `closeSignal` and removes `dir` (a server whose children outlive a SIGKILL, as PostgreSQL's
 * do, closes with its own shutdown signal).
 */
export function restartable(
  port: number,
  dir: string,
  first: ServerProcess,
  run: () => Promise<ServerProcess>,
  stopSignal: NodeJS.Signals,
  closeSignal: NodeJS.Signals = "SIGKILL",
): BackendServer {
  let proc: ServerProcess | undefined = first;
  return {
    host: "127.0.0.1",
    port,
    async stop() {
      await proc?.kill(stopSignal);
      proc = undefined;
    },
    async start() {
      if (proc === undefined) proc = await run();
    },
    pause: () => proc?.pause(),
    resume: () => proc?.resume(),
    async close() {
      await proc?.kill(closeSignal);
      proc = undefined;
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The first executable `name` in `dirs` then PATH. */
export function findBinary(name: string, dirs: readonly string[] = []): string | undefined {
  for (const dir of [...dirs, ...(process.env.PATH ?? "").split(delimiter)]) {
    if (dir === "") continue;
    const file = join(dir, name);
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // not here
    }
  }
  return undefined;
}

/** A fresh temp dir, on /dev/shm when there is one. */
export function backendTempDir(tag: string): string {
  return mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), `svc-${tag}-`));
}

const running = new Set<ChildProcess>();
// A test process that dies must not leave servers behind.
process.on("exit", () => {
  for (const child of running) signalGroup(child, "SIGKILL");
});

function signalGroup(child: ChildProcess, sig: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, sig);
  } catch {
    // already gone
  }
}

/** The processes below `pid` (Linux /proc; PostgreSQL's backends leave the process group). */
function descendants(pid: number): number[] {
  const parent = new Map<number, number>();
  let entries: string[] = [];
  try {
    entries = readdirSync("/proc").filter((e) => /^[0-9]+$/.test(e));
  } catch {
    return [];
  }
  for (const e of entries) {
    try {
      const stat = readFileSync(`/proc/${e}/stat`, "utf8");
      // pid (comm) state ppid ...: comm may hold spaces, so read after its closing parenthesis.
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parent.set(Number(e), ppid);
    } catch {
      // gone meanwhile
    }
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const [c, pp] of parent) {
      if (pp === p) {
        out.push(c);
        walk(c);
      }
    }
  };
  walk(pid);
  return out;
}

/** Signals the server, its process group and every process below it. */
function signalTree(child: ChildProcess, sig: NodeJS.Signals): void {
  signalGroup(child, sig);
  if (child.pid === undefined) return;
  for (const p of descendants(child.pid)) {
    try {
      process.kill(p, sig);
    } catch {
      // gone meanwhile
    }
  }
}

export interface ServerProcess {
  readonly child: ChildProcess;
  /** Sends `sig` to the server's process group, waits for its exit (SIGKILL after 5 s). */
  kill(sig?: NodeJS.Signals): Promise<void>;
  pause(): void;
  resume(): void;
}

/**
 * Spawns a server in its own process group and resolves once `ready` matches its output (stdout and
 * stderr); rejects with the output's tail when it exits or is not ready within 20 s.
 */
export async function spawnServer(
  cmd: string,
  args: readonly string[],
  ready: RegExp,
  opts: SpawnOptions = {},
): Promise<ServerProcess> {
  const child = spawn(cmd, args, { ...opts, detached: true, stdio: ["ignore", "pipe", "pipe"] });
  running.add(child);
  let out = "";
  let exited = false;
  const exit = new Promise<void>((resolve) =>
    child.once("exit", () => {
      exited = true;
      running.delete(child);
      resolve();
    }),
  );
  const seen = new Promise<void>((resolve, reject) => {
    const onData = (d: Buffer) => {
      out = (out + d.toString()).slice(-8000);
      if (ready.test(out)) resolve();
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    void exit.then(() => reject(new Error(`${cmd} exited at start: ${out.trim().slice(-2000)}`)));
    setTimeout(() => reject(new Error(`${cmd} not ready within 20 s: ${out.trim().slice(-2000)}`)), 20_000).unref();
  });
  const proc: ServerProcess = {
    child,
    async kill(sig = "SIGTERM") {
      if (exited) return;
      signalTree(child, "SIGCONT");
      signalGroup(child, sig);
      const timer = setTimeout(() => signalGroup(child, "SIGKILL"), 5000);
      await exit;
      clearTimeout(timer);
    },
    pause: () => signalTree(child, "SIGSTOP"),
    resume: () => signalTree(child, "SIGCONT"),
  };
  try {
    await seen;
  } catch (err) {
    await proc.kill("SIGKILL");
    throw err;
  }
  return proc;
}

/** A server that can be started: available, or why not. */
export type BackendProvider =
  | { available: true; start(): Promise<BackendServer> }
  | { available: false; reason: string };

/**
 * `describe(name, body)` when the server can run; otherwise one loud line and a skipped suite, or
 * under CI a suite whose single test fails.
 */
export function describeBackend<P extends { available: true } | { available: false; reason: string }>(
  name: string,
  provider: P,
  body: (p: Extract<P, { available: true }>) => void,
): void {
  if (provider.available) {
    describe(name, () => body(provider as Extract<P, { available: true }>));
    return;
  }
  console.warn(`!!! ${name}: SKIPPED, ${provider.reason} !!!`);
  if (process.env.CI) {
    describe(name, () => {
      it("needs its back end under CI", () => {
        throw new Error(`${name}: ${provider.reason}`);
      });
    });
  } else skippedSuite(name, provider.reason);
}

/**
 * A suite reported as skipped for `reason`, whose body is never run (a skipped body still runs to
 * collect its tests: what it makes, such as a temp directory, no hook would remove).
 */
export function skippedSuite(name: string, reason: string): void {
  describe.skip(name, () => {
    it(reason, () => {});
  });
}

/** uid/gid of an OS user (from /etc/passwd), undefined when there is none. */
export function osUser(name: string): { uid: number; gid: number } | undefined {
  try {
    for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
      const f = line.split(":");
      if (f[0] === name) return { uid: Number(f[2]), gid: Number(f[3]) };
    }
  } catch {
    // no passwd file
  }
  return undefined;
}
