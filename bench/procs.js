// Child processes and temporary directories of a bench run: every child is tracked and killed when
// the run ends (normally, on an error, or on Ctrl-C / SIGTERM / SIGHUP); every temp dir removed.
// Also: spawning with a raised open-files limit, and reading a process's CPU time and RSS.

import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";

const children = new Set();
const dirs = new Set();

export function track(child) {
  children.add(child);
  child.once("exit", () => children.delete(child));
  return child;
}

/** A temp dir under `base` (default the OS temp dir), removed when the run ends. */
export function tempDir(prefix, base = os.tmpdir()) {
  const d = mkdtempSync(join(base, prefix));
  dirs.add(d);
  return d;
}

export function removeDir(d) {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

function killAllSync() {
  for (const c of children) {
    try {
      process.kill(c.pid, "SIGKILL");
    } catch {}
  }
  children.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

export function installCleanup() {
  process.on("exit", killAllSync);
  for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}, stopping every child process\n`);
      killAllSync();
      process.exit(130);
    });
  }
  process.on("uncaughtException", (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    killAllSync();
    process.exit(1);
  });
  process.on("unhandledRejection", (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    killAllSync();
    process.exit(1);
  });
}

/**
 * Spawns `cmd args` through sh with the soft open-files limit raised to `nofile` (or to the hard
 * limit when `nofile` is above it and the process may not raise the hard limit). `exec` keeps the
 * pid, so the returned child's pid is the command's.
 */
export function spawnWithNofile(cmd, args, nofile, opts) {
  const script = `ulimit -n ${nofile} 2>/dev/null || ulimit -n "$(ulimit -Hn)" 2>/dev/null; exec "$0" "$@"`;
  return track(spawn("sh", ["-c", script, cmd, ...args], opts));
}

/** Whether a child may run with `nofile` open files. */
export function canRaiseNofile(nofile) {
  return spawnSync("sh", ["-c", `ulimit -n ${nofile}`]).status === 0;
}

export function hardNofile() {
  return spawnSync("sh", ["-c", "ulimit -Hn"], { encoding: "utf8" }).stdout.trim();
}

/** SIGTERM, then SIGKILL after `graceMs`; resolves when the child has exited. */
export function stopChild(child, graceMs = 5000) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const t = setTimeout(() => {
      try {
        process.kill(child.pid, "SIGKILL");
      } catch {}
    }, graceMs);
    child.once("exit", () => {
      clearTimeout(t);
      resolve();
    });
    try {
      process.kill(child.pid, "SIGTERM");
    } catch {}
  });
}

const CLK_TCK = Number(spawnSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).stdout?.trim()) || 100;

/**
 * CPU time of a process (all its threads), in ms: the sum of its threads' run time in nanoseconds
 * (/proc/<pid>/task/<tid>/schedstat), not the 10 ms ticks of /proc/<pid>/stat, which put up to
 * 3% of error on a 2 s window of a broker using a third of a core. A thread that ended is not
 * counted (a broker's threads live as long as it does); without schedstat, the ticks.
 */
export function cpuMs(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, "utf8").split(" ")[0]);
      } catch {
        // the thread ended between the listing and the read
      }
    }
    if (ns > 0) return ns / 1e6;
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const f = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(f[11]) + Number(f[12])) * 1000) / CLK_TCK;
  } catch {
    return Number.NaN;
  }
}

/** Resident set size of a process, in bytes, from /proc/<pid>/status. */
export function rssBytes(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : Number.NaN;
  } catch {
    return Number.NaN;
  }
}
