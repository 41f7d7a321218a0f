// Reconnect delays: starts at `minMs`, doubles after every failed attempt up to `maxMs`, with
// +-25% jitter so nodes that lost each other at once do not redial in lockstep; reset on success.

export class Backoff {
  private current: number;

  constructor(
    private readonly minMs = 100,
    private readonly maxMs = 5000,
  ) {
    this.current = minMs;
  }

  next(): number {
    const base = this.current;
    this.current = Math.min(this.maxMs, this.current * 2);
    return Math.round(base * (0.75 + Math.random() * 0.5));
  }

  reset(): void {
    this.current = this.minMs;
  }
}
