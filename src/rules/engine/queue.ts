// A bounded work queue drained in setImmediate batches: the hooks only push (O(1)), the rules
// are evaluated and their actions started later, so neither slows MQTT delivery. A push to a
// full queue is refused (the caller counts the failure).

export class WorkQueue<T> {
  private items: (T | undefined)[] = [];
  private head = 0;
  private scheduled = false;

  constructor(
    private readonly limit: number,
    private readonly handle: (item: T) => void,
    private readonly batch = 512,
  ) {}

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): boolean {
    if (this.length >= this.limit) return false;
    this.items.push(item);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.drain);
    }
    return true;
  }

  private readonly drain = (): void => {
    this.scheduled = false;
    const end = Math.min(this.items.length, this.head + this.batch);
    while (this.head < end) {
      const item = this.items[this.head] as T;
      this.items[this.head++] = undefined;
      this.handle(item);
    }
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else {
      if (this.head > 4096) {
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
