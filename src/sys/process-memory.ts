// This process's memory figures for the monitors and the API, read so that they never throw. The
// resident set size comes from /proc/self/stat, which libuv opens for every reading: a node that
// has used up its file descriptors (a connection storm at the OS limit) cannot read it, and
// process.memoryUsage() then throws EMFILE, which out of a timer would end the process and every
// connection with it. The heap figures come from V8 and need no descriptor.

import { getHeapStatistics } from "node:v8";

let lastRss = 0;

/** Resident set size in bytes: the latest reading that succeeded (0 before the first). */
export function residentBytes(): number {
  try {
    lastRss = process.memoryUsage.rss();
  } catch {
    // Out of descriptors (EMFILE/ENFILE): the previous reading stands until one succeeds again.
  }
  return lastRss;
}

/** V8 heap in use and memory held outside it by JavaScript objects (buffers), in bytes. */
export function jsMemory(): { heapUsed: number; external: number } {
  const h = getHeapStatistics();
  return { heapUsed: h.used_heap_size, external: h.external_memory };
}
