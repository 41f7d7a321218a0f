// Garbage collector settings of a broker process, applied by `svc start` before the node starts
// (never by a library caller: what it sets is process-wide): a young collection every
// YOUNG_COLLECTION_BYTES read from MQTT connections and inter-node links, so that dead socket read
// buffers never pile up into full mark-compacts (why: broker/connection/read-pacing.ts).

import { collectEvery } from "./broker/connection/read-pacing.ts";
import { youngCollection } from "./sys/gc.ts";

/**
 * Bytes read between two young collections. Measured at 8,000 publishes/s of 16 KB, as broker CPU
 * per publish against none: 4 MB saved nothing (the scavenges cost what they saved), 8 and 16 MB
 * the same (and 16 MB about 10 MB more peak RSS). Under a flood of 16 KB publishes (fan-in, about
 * 60,000/s, 1 GB read a second) 8 MB meant some 120 scavenges a second; 16 MB took a third off the
 * CPU per publish (17.4-18.2 -> 10.8-12.2 us) and raised deliveries from 59-61k to 74-78k/s; 32 MB
 * gave no more. 64 B flows: the same either way. One flood in five to ten still falls into full
 * collections every 50-100 ms of a small heap (V8's own, for the external memory; 50-88 in 5 s)
 * and gives 50-66k/s; holding the forced scavenges back while V8 marks did not prevent it.
 */
export const YOUNG_COLLECTION_BYTES = 16 * 1024 * 1024;

/** Applies the settings above to this process. */
export function applyGcTuning(): void {
  collectEvery(YOUNG_COLLECTION_BYTES, youngCollection);
}
