// A bounded work queue drained in setImmediate batches: the hooks only push (O(1)), the rules
// are evaluated and their actions started later, so neither slows MQTT delivery. A push to a
// full queue is refused (the caller counts the failure). An entry is two values kept side by
// side in one array (no object per entry: entries wait across garbage collections); the array
// keeps its size between batches (an emptied queue starts again at slot 0, nothing reallocated).

export class WorkQueue<A, B> {
  private readonly items: unknown[] = [];
  /** Slot of the first entry's first value. */
  private head = 0;
  /** Slot after the last entry. */
  private tail = 0;
  private scheduled = false;

  constructor(
    private readonly limit: number,
    private readonly handle: (a: A, b: B) => void,
    private readonly batch = 512,
  ) {}

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

  private readonly drain = (): void => {
    this.scheduled = false;
    const items = this.items;
    const end = Math.min(this.tail, this.head + 2 * this.batch);
    // (A handler may clear the queue: the tail check stops the loop then.)
    while (this.head < end && this.head < this.tail) {
      const i = this.head;
      const a = items[i] as A;
      const b = items[i + 1] as B;
      items[i] = items[i + 1] = undefined;
      this.head = i + 2;
      this.handle(a, b);
    }
    if (this.head === this.tail) {
      this.head = this.tail = 0;
      return;
    }
    if (this.head > 8192) {
      // Entries left behind a long drained prefix move to the front.
      items.copyWithin(0, this.head, this.tail);
      items.fill(undefined, this.tail - this.head, this.tail);
      this.tail -= this.head;
      this.head = 0;
    }
    this.scheduled = true;
    setImmediate(this.drain);
  };

  clear(): void {
    this.items.length = 0;
    this.head = this.tail = 0;
  }
}
