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
   * for which `inUse(id)` is false, or 0 when all 65535 ids are in use.
   * [MQTT-2.2.1-4]
   */
  next(inUse: (id: number) => boolean): number {
    let id = this.last;
    for (let tries = 0; tries < MAX_PACKET_ID; tries++) {
      id = id === MAX_PACKET_ID ? 1 : id + 1; // never 0 [MQTT-2.2.1-4]
      if (!inUse(id)) {
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
