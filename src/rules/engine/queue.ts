// A bounded work queue: the hooks only push (O(1)), the rules are evaluated and their actions
// started later, so neither slows MQTT delivery. The first push schedules a turn as a microtask:
// it runs once the code that pushed returns (after a socket read's publishes are routed and their
// corked writes flushed by the ticks before it), while the events and their messages are young; a
// setImmediate turn would wait for a whole poll phase of reads, whose thousands of messages then
// outlive garbage collections (measured: about twice the scavenge time in a QoS 0 flood). Each
// turn hands over everything queued before it began, for at most `budgetMs`; the rest, and what
// the handlers queue meanwhile, waits for setImmediate turns (the event loop runs in between: a
// chain of events making events never holds I/O up for more than one budget). A push to a full
// queue is refused; the caller may then run the oldest entries at once (runNow) and push again.
// An entry is two values kept side by side (no object per entry) in a ring (the session queue's),
// so taking any number of entries off the front costs nothing for those left behind.

import { MessageQueue } from "../../broker/session/message-queue.ts";

export interface WorkQueueOptions {
  /** At most this many entries per turn (default: all queued). */
  batch?: number;
  /** At most about this long per turn, checked every 64 entries (default 10 ms). */
  budgetMs?: number;
  /** Called after each turn and each runNow (the queue's length then says how far it drained). */
  afterTurn?: () => void;
}

export class WorkQueue<A, B> {
  /** Each entry's two values side by side (never more than 2 * limit values). */
  private readonly ring: MessageQueue<unknown>;
  private scheduled = false;
  /** While a turn hands entries over. */
  private inTurn = false;
  private readonly batch: number;
  private readonly budgetMs: number;
  private readonly afterTurn: (() => void) | undefined;

  constructor(
    private readonly limit: number,
    private readonly handle: (a: A, b: B) => void,
    o: WorkQueueOptions = {},
  ) {
    this.ring = new MessageQueue(2 * limit);
    this.batch = o.batch ?? Number.POSITIVE_INFINITY;
    this.budgetMs = o.budgetMs ?? 10;
    this.afterTurn = o.afterTurn;
  }

  get length(): number {
    return this.ring.length >> 1;
  }

  push(a: A, b: B): boolean {
    const ring = this.ring;
    if (ring.length >= 2 * this.limit) return false;
    ring.push(a);
    ring.push(b);
    if (!this.scheduled) {
      this.scheduled = true;
      // From inside a turn (an action's event): the next turn comes after I/O, never right after.
      if (this.inTurn) setImmediate(this.drain);
      else queueMicrotask(this.drain);
    }
    return true;
  }

  /** Hands over the oldest `n` entries (at most) now, in order; the turn stays scheduled. */
  runNow(n: number): void {
    this.run(n, Number.POSITIVE_INFINITY);
    this.afterTurn?.();
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    this.inTurn = true;
    try {
      this.run(this.batch, performance.now() + this.budgetMs);
    } finally {
      this.inTurn = false;
    }
    if (this.ring.length > 0 && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    this.afterTurn?.();
  };

  /** Hands over at most `max` entries queued before the call, until `deadline`. */
  private run(max: number, deadline: number): void {
    const ring = this.ring;
    let todo = Math.min(this.length, max);
    let n = 0;
    // (A handler may clear the queue: the length check stops the loop then.)
    while (todo > 0 && ring.length > 0) {
      if ((++n & 63) === 0 && performance.now() > deadline) break;
      todo--;
      const a = ring.shift() as A;
      const b = ring.shift() as B;
      this.handle(a, b);
    }
  }

  clear(): void {
    this.ring.clear();
  }
}
