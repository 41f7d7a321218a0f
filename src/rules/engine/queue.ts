// A bounded work queue drained in setImmediate turns: the hooks only push (O(1)), the rules
// are evaluated and their actions started later, so neither slows MQTT delivery. Each turn hands
// over everything queued before it began, for at most `budgetMs` (then the event loop runs and
// the rest waits for the next turn): one turn of socket reads can queue thousands of publishes,
// and a turn that took only a fixed few hundred would let the queue fill while the broker is
// merely busy. A push to a full queue is refused; the caller may then run the oldest entries at
// once (runNow) and push again. An entry is two values kept side by side in one array (no object
// per entry: entries wait across garbage collections); the array keeps its size between turns (an
// emptied queue starts again at slot 0, nothing reallocated).

export interface WorkQueueOptions {
  /** At most this many entries per turn (default: all queued). */
  batch?: number;
  /** At most about this long per turn, checked every 64 entries (default 10 ms). */
  budgetMs?: number;
  /** Called after each turn and each runNow (the queue's length then says how far it drained). */
  afterTurn?: () => void;
}

export class WorkQueue<A, B> {
  private readonly items: unknown[] = [];
  /** Slot of the first entry's first value. */
  private head = 0;
  /** Slot after the last entry. */
  private tail = 0;
  private scheduled = false;
  private readonly batch: number;
  private readonly budgetMs: number;
  private readonly afterTurn: (() => void) | undefined;

  constructor(
    private readonly limit: number,
    private readonly handle: (a: A, b: B) => void,
    o: WorkQueueOptions = {},
  ) {
    this.batch = o.batch ?? Number.POSITIVE_INFINITY;
    this.budgetMs = o.budgetMs ?? 10;
    this.afterTurn = o.afterTurn;
  }

  get length(): number {
    return (this.tail - this.head) >> 1;
  }

  push(a: A, b: B): boolean {
    if (this.tail - this.head >= 2 * this.limit) return false;
    const t = this.tail;
    const items = this.items;
    if (t === items.length) items.push(a, b);
    else {
      items[t] = a;
      items[t + 1] = b;
    }
    this.tail = t + 2;
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
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
    this.run(this.batch, performance.now() + this.budgetMs);
    if (this.head !== this.tail && !this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    this.afterTurn?.();
  };

  /** Hands over at most `max` entries queued before the call, until `deadline`. */
  private run(max: number, deadline: number): void {
    const items = this.items;
    const end = Math.min(this.tail, this.head + 2 * max);
    let n = 0;
    // (A handler may clear the queue: the tail check stops the loop then.)
    while (this.head < end && this.head < this.tail) {
      if ((++n & 63) === 0 && performance.now() > deadline) break;
      const i = this.head;
      const a = items[i] as A;
      const b = items[i + 1] as B;
      items[i] = items[i + 1] = undefined;
      this.head = i + 2;
      this.handle(a, b);
    }
    if (this.head === this.tail) this.head = this.tail = 0;
    else if (this.head > 8192) {
      // Entries left behind a long drained prefix move to the front.
      items.copyWithin(0, this.head, this.tail);
      items.fill(undefined, this.tail - this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
    }
  }

  clear(): void {
    this.items.length = 0;
    this.head = this.tail = 0;
  }
}
