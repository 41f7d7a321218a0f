// This process's file descriptors: the soft limit the OS grants (every connection, file and pipe
// takes one), how many are open now, and the start-up check of that limit against the connections
// the listeners accept. A node at its limit keeps running (sys/process-memory.ts), but the OS
// refuses every connection past it, and nothing in the broker sees those refusals: the warning at
// start is where an operator learns of it.

import { readdirSync, readFileSync, statSync } from "node:fs";

/** Connections a node holds by default (spec 000 §1: 100k concurrent connections per node). */
export const DEFAULT_CAPACITY = 100_000;

let cachedLimit: number | undefined;

/** Soft RLIMIT_NOFILE from /proc/self/limits (Linux); 0 where the OS does not tell. */
export function openFileLimit(): number {
  if (cachedLimit !== undefined) return cachedLimit;
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    cachedLimit = m === null ? 0 : m[1] === "unlimited" ? 2 ** 31 - 1 : Number(m[1]);
  } catch (err) {
    // Out of descriptors now is no answer for later; a missing file (not Linux) is.
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "EMFILE" || code === "ENFILE") return 0;
    cachedLimit = 0;
  }
  return cachedLimit;
}

/**
 * Descriptors open now, else the event loop's active resources. Linux (6.2 on) gives the count as
 * the size of /proc/self/fd, a few microseconds whatever the count; listing the directory, the way
 * of older kernels, takes milliseconds per 10,000 connections, every time `/nodes` is asked.
 */
export function openHandles(): number {
  try {
    const counted = statSync("/proc/self/fd").size;
    if (counted > 0) return counted;
    // The listing holds one descriptor of its own.
    return readdirSync("/proc/self/fd").length - 1;
  } catch {
    return process.getActiveResourcesInfo().length;
  }
}

/**
 * The warning to log at start when the descriptor limit is below the connections the listeners
 * accept in all (`maxConnections`, at most DEFAULT_CAPACITY counted), null when it is not (or the
 * OS does not tell).
 */
export function descriptorLimitWarning(limit: number, maxConnections: number): string | null {
  const wanted = Math.min(maxConnections, DEFAULT_CAPACITY);
  if (limit <= 0 || limit >= wanted) return null;
  return (
    `this process may open ${limit} files (ulimit -n) but its listeners accept up to ` +
    `${maxConnections} connections: the OS refuses connections past about ${limit}; raise the ` +
    `limit to at least ${wanted + 1024} (ulimit -n, LimitNOFILE in a systemd unit, the container runtime's nofile)`
  );
}
