// Garbage collector settings of a broker process, applied by `svc start` before the node starts
// (never by a library caller: what it sets is process-wide): a young collection every
// YOUNG_COLLECTION_BYTES read from MQTT connections and inter-node links, so that dead socket read
// buffers never pile up into full mark-compacts (why: broker/connection/read-pacing.ts).

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
