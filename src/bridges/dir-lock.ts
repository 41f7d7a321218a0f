// One process per directory: a LOCK file in it names "<pid>@<hostname>" of the process using it.
// Another process of the same host is refused while that one lives (and a second user in this
// process too). A LOCK of a process gone, of this process's own pid (a container restarted: pids
// repeat) or of another host (a volume that moved) is stale and taken over. Two processes taking
// over the same stale LOCK at the same instant are not told apart.

import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join, resolve } from "node:path";

const LOCK = "LOCK";

/** Cache directories this process holds: a LOCK naming this pid but not held here is a previous incarnation's. */
const heldDirs = new Set<string>();

/** Takes `dir`'s LOCK, or throws when a live process of this host (or this process) holds it. */
export function lockDir(dir: string): void {
  const key = resolve(dir);
  if (heldDirs.has(key)) throw new Error(`cache directory ${dir} is already in use in this process`);
  const path = join(dir, LOCK);
  for (;;) {
    try {
      writeFileSync(path, `${process.pid}@${hostname()}\n`, { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = lockHolder(path);
    if (holder !== null) {
      throw new Error(
        `cache directory ${dir} is in use by process ${holder} (remove ${path} if that process does not use it)`,
      );
    }
    rmSync(path, { force: true }); // stale
  }
  heldDirs.add(key);
}

export function unlockDir(dir: string): void {
  if (!heldDirs.delete(resolve(dir))) return;
  rmSync(join(dir, LOCK), { force: true });
}

/** The live process of this host holding a LOCK file, or null when the LOCK is stale. */
function lockHolder(path: string): number | null {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch {
    return null;
  }
  const m = /^(\d+)@(.*)$/.exec(text.trim());
  if (m === null || m[2] !== hostname()) return null;
  const pid = Number(m[1]);
  if (pid === process.pid) return null;
  try {
    process.kill(pid, 0);
    return pid;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM" ? pid : null;
  }
}
