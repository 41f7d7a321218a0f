// The remote broker's Receive Maximum (MQTT 5.0 §3.2.2.3.3, §4.9): at most that many QoS 1 and
// QoS 2 publishes unacknowledged at once. MQTT.js applies the limit only to what it receives; a
// bridge sends batch after batch (up to max_inflight_batches × batch_count_limit messages), so
// what goes over the window waits here, in order: a QoS 0 message behind a waiting one waits too.

interface Waiting {
  qos: number;
  send: () => void;
}

export class SendWindow {
  private outstanding = 0;
  private queue: (Waiting | undefined)[] = [];
  private head = 0;
  private pumping = false;

  /** `size`: the remote's Receive Maximum (1-65535). */
  constructor(readonly size: number) {}

  /** Publishes sent and not yet acknowledged (QoS 1/2). */
  get inflight(): number {
    return this.outstanding;
  }

  /** Publishes waiting for room. */
  get waiting(): number {
    return this.queue.length - this.head;
  }

  /** Runs `send` now, or once the window has room; a QoS 1/2 publish calls release() when it completes. */
  submit(qos: number, send: () => void): void {
    if (this.waiting > 0 || (qos > 0 && this.outstanding >= this.size)) {
      this.queue.push({ qos, send });
      return;
    }
    if (qos > 0) this.outstanding++;
    send();
  }

  /** A QoS 1/2 publish was acknowledged (or failed): what waits may go. */
  release(): void {
    this.outstanding--;
    if (this.pumping) return; // a completion inside send(): the loop below goes on
    this.pumping = true;
    try {
      while (this.head < this.queue.length) {
        const next = this.queue[this.head] as Waiting;
        if (next.qos > 0) {
          if (this.outstanding >= this.size) break;
          this.outstanding++;
        }
        this.queue[this.head++] = undefined;
        next.send();
      }
    } finally {
      this.pumping = false;
    }
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    }
  }
}
