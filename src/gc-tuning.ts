// Garbage collector settings of a broker process, applied by `svc start` before the node starts
// (never by a library caller: V8 flags are process-wide).
//
// Every socket read lands in a new ArrayBuffer (Node allocates one per read), and V8 counts that
// memory as external. By default V8 runs a full mark-compact of the whole heap each time external
// memory has grown by a fixed step (64 MB) since the last one, even when every one of those
// buffers died young: at 16 KB payloads a broker reads hundreds of MB per second, a full
// collection every 100-150 ms, its concurrent marking a third of a core. Two settings:
// - external memory counts toward V8's global heap limit instead (GC_FLAGS): full collections come
//   at the pace the heap and the buffers that live on actually grow;
// - a young collection every YOUNG_COLLECTION_BYTES read from MQTT connections
//   (broker/connection/read-pacing.ts) frees the read buffers that died before they pile up.

import { setFlagsFromString } from "node:v8";
import { collectEvery } from "./broker/connection/read-pacing.ts";
import { youngCollection } from "./sys/gc.ts";

/** The V8 flag `applyGcTuning` sets (V8's own flag, read at each allocation limit check). */
export const GC_FLAGS = ["--external-memory-accounted-in-global-limit"] as const;

/**
 * Bytes read between two young collections. Measured at 8,000 publishes/s of 16 KB, as broker CPU
 * per publish: 4 MB saved nothing (the scavenges cost what they saved), 8 MB saved about a fifth,
 * 16 MB about a tenth.
 */
export const YOUNG_COLLECTION_BYTES = 8 * 1024 * 1024;

/** Applies the settings above to this process. */
export function applyGcTuning(): void {
  for (const f of GC_FLAGS) setFlagsFromString(f);
  collectEvery(YOUNG_COLLECTION_BYTES, youngCollection);
}
