// A bounded work queue drained in setImmediate batches: the hooks only push (O(1)), the rules
// are evaluated and their actions started later, so neither slows MQTT delivery. A push to a
// full queue is refused (the caller counts the failure). An entry is two values kept side by
// side in one array (no object per entry: entries wait across garbage collections).

export class WorkQueue<A, B> {
  private items: unknown[] = [];
  /** Index of the first entry's first value. */
  private head = 0;
  private scheduled = false;

  constructor(
    private readonly limit: number,
    private readonly handle: (a: A, b: B) => void,
    private readonly batch = 512,
  ) {}

  get length(): number {
    return (this.items.length - this.head) >> 1;
  }

  push(a: A, b: B): boolean {
    if (this.length >= this.limit) return false;
    this.items.push(a, b);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    return true;
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const items = this.items;
    const end = Math.min(items.length, this.head + 2 * this.batch);
    while (this.head < end) {
      const i = this.head;
      const a = items[i] as A;
      const b = items[i + 1] as B;
      items[i] = items[i + 1] = undefined;
      this.head = i + 2;
      this.handle(a, b);
    }
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else {
      if (this.head > 8192) {
        this.items = this.items.slice(this.head);
        this.head = 0;
      }
      this.scheduled = true;
      setImmediate(this.drain);
    }
  };

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
