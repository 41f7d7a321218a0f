// MessageQueue: bounded FIFO ring buffer for a session's pending outbound
// messages. O(1) push/shift, grows by doubling up to the limit, drops the
// oldest entry when full. The backing array is made on the first push (most
// sessions of a large idle fleet never queue anything). Which messages are queued (e.g. QoS 0 while
// offline, see 4.1 session state) is the caller's policy.
//
// Spec references (MQTT 5.0):
//   4.1      Session state: QoS 1/2 messages pending transmission
//   3.1.2.4  Clean Start / session present; queued messages survive offline
//   4.9      Flow control: excess messages may be queued or dropped

const INITIAL_CAPACITY = 16;

export class MessageQueue<T> {
  /** Made on the first push (and dropped by clear()): null while nothing was queued. */
  private buf: (T | undefined)[] | null = null;
  private head = 0;
  private len = 0;
  private cap: number;
  private readonly limit: number;

  /** @param maxLen maximum number of items; 0 = unlimited. */
  constructor(maxLen: number) {
    if (!Number.isInteger(maxLen) || maxLen < 0) {
      throw new RangeError(`MessageQueue maxLen must be a non-negative integer, got ${maxLen}`);
    }
    this.limit = maxLen;
    this.cap = initialCapacity(maxLen);
  }

  get length(): number {
    return this.len;
  }

  get maxLen(): number {
    return this.limit;
  }

  /** Current backing capacity, or the one the first push makes (for tests / diagnostics). */
  get capacity(): number {
    return this.cap;
  }

  /**
   * Appends `item`. When the queue is full, the oldest item is dropped and
   * returned; otherwise returns undefined.
   */
  push(item: T): T | undefined {
    const len = this.len;
    let buf = this.buf;
    if (buf === null) {
      buf = new Array<T | undefined>(this.cap).fill(undefined);
      this.buf = buf;
    }
    if (len === this.cap) {
      if (this.limit > 0 && len === this.limit) {
        // Full: the tail slot is the head slot. Overwrite the oldest.
        const head = this.head;
        const dropped = buf[head];
        buf[head] = item;
        this.head = head + 1 === len ? 0 : head + 1;
        return dropped;
      }
      buf = this.grow(buf);
    }
    let tail = this.head + len;
    if (tail >= this.cap) tail -= this.cap;
    buf[tail] = item;
    this.len = len + 1;
    return undefined;
  }

  /** Removes and returns the oldest item. */
  shift(): T | undefined {
    const buf = this.buf;
    if (this.len === 0 || buf === null) return undefined;
    const head = this.head;
    const item = buf[head];
    buf[head] = undefined;
    this.head = head + 1 === this.cap ? 0 : head + 1;
    this.len--;
    return item;
  }

  /** The oldest item without removing it. */
  peek(): T | undefined {
    return this.len === 0 || this.buf === null ? undefined : this.buf[this.head];
  }

  /** Removes every item and releases the backing array (the next push makes a new one). */
  clear(): void {
    this.cap = initialCapacity(this.limit);
    this.buf = null;
    this.head = 0;
    this.len = 0;
  }

  /** Oldest first. The queue must not be modified while iterating. */
  *[Symbol.iterator](): IterableIterator<T> {
    const buf = this.buf;
    if (buf === null) return;
    const cap = this.cap;
    let idx = this.head;
    for (let i = 0; i < this.len; i++) {
      yield buf[idx] as T;
      idx = idx + 1 === cap ? 0 : idx + 1;
    }
  }

  /**
   * Removes, in place and keeping order, every item for which `pred`
   * returns true. Returns the number removed. If `pred` throws, the queue
   * stays consistent (items already removed stay removed).
   */
  removeWhere(pred: (item: T) => boolean): number {
    const len = this.len;
    const buf = this.buf;
    if (len === 0 || buf === null) return 0;
    const cap = this.cap;
    const head = this.head;
    let r = 0; // items examined
    let w = 0; // items kept
    let ri = head;
    let wi = head;
    try {
      while (r < len) {
        const item = buf[ri] as T;
        if (!pred(item)) {
          if (wi !== ri) buf[wi] = item;
          w++;
          wi = wi + 1 === cap ? 0 : wi + 1;
        }
        r++;
        ri = ri + 1 === cap ? 0 : ri + 1;
      }
    } finally {
      // On a throw, keep the unexamined items (including the current one).
      while (r < len) {
        if (wi !== ri) buf[wi] = buf[ri];
        w++;
        wi = wi + 1 === cap ? 0 : wi + 1;
        r++;
        ri = ri + 1 === cap ? 0 : ri + 1;
      }
      // Release the vacated slots.
      for (let k = w; k < len; k++) {
        buf[wi] = undefined;
        wi = wi + 1 === cap ? 0 : wi + 1;
      }
      this.len = w;
    }
    return len - w;
  }

  private grow(old: (T | undefined)[]): (T | undefined)[] {
    const oldCap = this.cap;
    let newCap = oldCap * 2;
    if (this.limit > 0 && newCap > this.limit) newCap = this.limit;
    const buf = new Array<T | undefined>(newCap).fill(undefined);
    let idx = this.head;
    for (let i = 0; i < this.len; i++) {
      buf[i] = old[idx];
      idx = idx + 1 === oldCap ? 0 : idx + 1;
    }
    this.buf = buf;
    this.cap = newCap;
    this.head = 0;
    return buf;
  }
}

function initialCapacity(limit: number): number {
  return limit > 0 && limit < INITIAL_CAPACITY ? limit : INITIAL_CAPACITY;
}
