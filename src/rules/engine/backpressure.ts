// Ingress back-pressure from the rule engine's queue, as from a congested session (session.ts):
// while the queue is over its high watermark, the acknowledgements of the QoS 1/2 publishes that
// queue events are held (broker.congested), so publishers with a bounded window slow down to the
// pace of evaluation instead of filling the queue (whose overflow fails the rules' actions); they
// are let go once the queue drained below its low watermark.

import type { AckHolder } from "../../broker/ports.ts";

/** Most acknowledgements held back at once; beyond, they go at once. */
const MAX_HELD = 10_000;

export class QueuePressure implements AckHolder {
  private held: (() => void)[] = [];

  constructor(
    /** Queue length from which acknowledgements are held. */
    readonly highWater: number,
    /** Queue length at or below which they are let go. */
    private readonly lowWater: number,
  ) {}

  holdAck(release: () => void): void {
    if (this.held.length >= MAX_HELD) release();
    else this.held.push(release);
  }

  /** After a turn of the queue (or its clearing): lets the held acknowledgements go once `length` is low. */
  update(length: number): void {
    if (this.held.length === 0 || length > this.lowWater) return;
    const held = this.held;
    this.held = [];
    for (const release of held) release();
  }
}
