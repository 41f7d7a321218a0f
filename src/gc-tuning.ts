// Garbage collector settings of a broker process, applied by `svc start` before the node starts
// (never by a library caller: what it sets is process-wide).
//
// Every socket read lands in a new ArrayBuffer (Node allocates one per read), and V8 counts that
// memory as external. By default V8 runs a full mark-compact of the whole heap each time external
// memory has grown by a fixed step (64 MB) since the last one; the read buffers die young, but only
// a scavenge frees them, and scavenges come as the young generation fills with JS objects, which
// large payloads hardly do. At 16 KB payloads a broker reads hundreds of MB per second: a full
// collection every 100-150 ms, its concurrent marking a third of a core. A young collection every
// YOUNG_COLLECTION_BYTES read from MQTT connections and inter-node links
// (broker/connection/read-pacing.ts) frees the dead read buffers before they pile up.

import { collectEvery } from "./broker/connection/read-pacing.ts";
import { youngCollection } from "./sys/gc.ts";

/**
 * Bytes read between two young collections. Measured at 8,000 publishes/s of 16 KB, as broker CPU
 * per publish: 4 MB saved nothing (the scavenges cost what they saved), 8 MB saved about a fifth,
 * 16 MB about a tenth.
 */
export const YOUNG_COLLECTION_BYTES = 8 * 1024 * 1024;

/** Applies the settings above to this process. */
export function applyGcTuning(): void {
  collectEvery(YOUNG_COLLECTION_BYTES, youngCollection);
}
