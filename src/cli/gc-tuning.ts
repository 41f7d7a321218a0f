// Garbage collector settings of a broker process, applied by `svc start` before the node starts.
//
// Every socket read lands in a new ArrayBuffer (Node allocates one per read), and V8 counts that
// memory as external. By default V8 runs a full mark-compact of the whole heap each time external
// memory has grown by a fixed step (64 MB) since the last one, even when every one of those
// buffers died young and a scavenge has already freed it. At 16 KB payloads a broker reads
// hundreds of MB per second: a full collection every 100-150 ms, its concurrent marking a third of
// a core. With external memory accounted in V8's global limit instead, it counts against the same
// growing limit as the heap: buffers freed by scavenges no longer force full collections, and full
// collections come at the pace the heap and the buffers that live on actually grow.

import { setFlagsFromString } from "node:v8";

/** The V8 flag `applyGcTuning` sets (V8's own flag, read at each allocation limit check). */
export const GC_FLAGS = ["--external-memory-accounted-in-global-limit"] as const;

/** Applies GC_FLAGS to this process: V8 flags are process-wide, so only a process entry calls it. */
export function applyGcTuning(): void {
  for (const f of GC_FLAGS) setFlagsFromString(f);
}
