// A Map for keys that come and go again: a filter subscribed and unsubscribed, a topic level of a
// client's own filter, a client id that reconnects. V8's Map leaves a deleted entry in its
// bucket's chain until the table is rebuilt, which happens only once the table is full: a key
// deleted and added back N times in between makes every lookup of it walk N dead entries (in a
// table of 100,000 live keys, tens of thousands). Here a deleted key keeps its entry, marked
// GONE, and comes back in place. Dead entries are removed for real once they outnumber the live
// ones (and at least MIN_SWEEP of them): each key at most once per sweep, and a sweep costs no
// more than the deletions that led to it. A key that comes back keeps its place in the order.

const GONE: unique symbol = Symbol("gone");
const MIN_SWEEP = 1024;

export class ChurnMap<K, V> {
  private readonly map = new Map<K, V | typeof GONE>();
  private dead = 0;

  get size(): number {
    return this.map.size - this.dead;
  }

  /** Entries held, dead ones included (for tests and diagnostics). */
  get held(): number {
    return this.map.size;
  }

  get(key: K): V | undefined {
    const v = this.map.get(key);
    return v === GONE ? undefined : v;
  }

  has(key: K): boolean {
    const v = this.map.get(key);
    return v === undefined ? this.map.has(key) : v !== GONE;
  }

  set(key: K, value: V): this {
    if (this.map.get(key) === GONE) this.dead--;
    this.map.set(key, value);
    return this;
  }

  delete(key: K): boolean {
    const v = this.map.get(key);
    if (v === GONE || (v === undefined && !this.map.has(key))) return false;
    this.map.set(key, GONE);
    this.dead++;
    if (this.dead >= MIN_SWEEP && this.dead > this.map.size - this.dead) this.sweep();
    return true;
  }

  clear(): void {
    this.map.clear();
    this.dead = 0;
  }

  keys(): IterableIterator<K> {
    return new LiveKeys(this.map.entries());
  }

  values(): IterableIterator<V> {
    return new Live<V>(this.map.values());
  }

  entries(): IterableIterator<[K, V]> {
    return new LiveEntries<K, V>(this.map.entries());
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this.entries();
  }

  private sweep(): void {
    for (const [k, v] of this.map) if (v === GONE) this.map.delete(k);
    this.dead = 0;
  }
}

// Iterators over the live entries: each step is the Map iterator's own result, dead ones skipped
// (no generator, no allocation but a key's result).

class Live<V> implements IterableIterator<V> {
  constructor(private readonly inner: IterableIterator<V | typeof GONE>) {}

  next(): IteratorResult<V> {
    for (;;) {
      const r = this.inner.next();
      if (r.done === true || r.value !== GONE) return r as IteratorResult<V>;
    }
  }

  [Symbol.iterator](): IterableIterator<V> {
    return this;
  }
}

class LiveEntries<K, V> implements IterableIterator<[K, V]> {
  constructor(private readonly inner: IterableIterator<[K, V | typeof GONE]>) {}

  next(): IteratorResult<[K, V]> {
    for (;;) {
      const r = this.inner.next();
      if (r.done === true || r.value[1] !== GONE) return r as IteratorResult<[K, V]>;
    }
  }

  [Symbol.iterator](): IterableIterator<[K, V]> {
    return this;
  }
}

class LiveKeys<K, V> implements IterableIterator<K> {
  constructor(private readonly inner: IterableIterator<[K, V | typeof GONE]>) {}

  next(): IteratorResult<K> {
    for (;;) {
      const r = this.inner.next();
      if (r.done === true) return r;
      if (r.value[1] !== GONE) return { done: false, value: r.value[0] };
    }
  }

  [Symbol.iterator](): IterableIterator<K> {
    return this;
  }
}
