// PacketIdAllocator: hands out non-zero, currently unused Packet
// Identifiers for server-originated QoS 1/2 PUBLISH packets, cycling
// through 1..65535.
//
// Spec references (MQTT 5.0):
//   2.2.1  Packet Identifier: non-zero and currently unused [MQTT-2.2.1-4];
//          an id is free again once its acknowledgement flow completes

export const MAX_PACKET_ID = 65535;

export class PacketIdAllocator {
  private last = 0;

  /**
   * Returns the next id after the last one handed out (wrapping 65535 -> 1)
   * that is not in use, or 0 when all 65535 ids are in use. `inUse` is a predicate or anything
   * with `has(id)` (the session passes its inflight Map: no closure per session).
   * [MQTT-2.2.1-4]
   */
  next(inUse: ((id: number) => boolean) | { has(id: number): boolean }): number {
    let id = this.last;
    const fn = typeof inUse === "function" ? inUse : null;
    for (let tries = 0; tries < MAX_PACKET_ID; tries++) {
      id = id === MAX_PACKET_ID ? 1 : id + 1; // never 0 [MQTT-2.2.1-4]
      const used = fn !== null ? fn(id) : (inUse as { has(id: number): boolean }).has(id);
      if (!used) {
        this.last = id;
        return id;
      }
    }
    return 0;
  }

  /** Restarts the cycle so that the next id tried is 1. */
  reset(): void {
    this.last = 0;
  }
}
