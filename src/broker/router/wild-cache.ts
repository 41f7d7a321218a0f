// The router's wildcard matches per published topic, so dispatch neither splits a topic nor walks
// the trie for a topic published before. A topic's matches change only when a wildcard filter
// that can match it comes or goes, and such a filter can only match topics that start with its
// literal levels (those before its first '+' or '#'). So a filter forgets the topics under its
// first two literal levels (`dev/42/cmd/#`: every cached `dev/42/...`), or under its first one
// (`dev/+/state`: every `dev/...`); only a filter starting with a wildcard forgets them all. A
// client subscribing to a filter of its own (`dev/<id>/cmd/#`) as it connects then leaves every
// other device's topics cached.
//
// The topics are filed by their first levels only once a filter comes or goes (until the cache
// starts over): a node whose wildcard filters stay put pays a Map insertion per new topic, no more.
// Bounded: once it holds `limit` topics it takes no new ones until as many lookups missed, then it
// starts over (more topics than it holds, published in turn, cost a trie walk each, not an
// insertion and a reset too).
//
// A forgotten topic keeps its key, marked FORGOTTEN, until the cache starts over: V8's Map leaves
// a deleted entry in its bucket's chain until the table is rebuilt, so a topic deleted and added
// again on every reconnect of one client would make its own lookups ever longer.

const FORGOTTEN: readonly never[] = [];

export class WildCache<V> {
  private readonly hits = new Map<string, readonly V[]>();
  /** Cached topics by first level, then by first two levels (`dev` -> `dev/42` -> topics). */
  private readonly groups = new Map<string, Map<string, string[]>>();
  /** Whether `groups` files every topic held (from the first forget() on). */
  private grouped = false;
  /** Lookups that missed since the cache is full. */
  private missedFull = 0;

  constructor(private readonly limit: number) {}

  /** Topics held, forgotten ones included (what the limit counts). */
  get size(): number {
    return this.hits.size;
  }

  get(topic: string): readonly V[] | undefined {
    const v = this.hits.get(topic);
    return v === FORGOTTEN ? undefined : v;
  }

  set(topic: string, matches: readonly V[]): void {
    const hits = this.hits;
    if (hits.size >= this.limit && !hits.has(topic)) {
      if (++this.missedFull < this.limit) return;
      this.clear();
    }
    const before = hits.size;
    hits.set(topic, matches);
    // A forgotten topic is still filed: only a new one is.
    if (this.grouped && hits.size !== before) this.file(topic);
  }

  /** A wildcard filter came or went: forgets every topic it could match. */
  forget(filter: string): void {
    const s1 = filter.indexOf("/");
    const first = s1 === -1 ? filter : filter.slice(0, s1);
    if (first === "+" || first === "#") {
      this.clear();
      return;
    }
    if (!this.grouped) {
      for (const t of this.hits.keys()) this.file(t);
      this.grouped = true;
    }
    const byTwo = this.groups.get(first);
    if (byTwo === undefined) return;
    const s2 = s1 === -1 ? -1 : filter.indexOf("/", s1 + 1);
    const second = s1 === -1 ? "" : filter.slice(s1 + 1, s2 === -1 ? filter.length : s2);
    if (s2 === -1 || second === "+" || second === "#") {
      // One literal level: every topic under it (a one-level filter forgets its own group too).
      for (const group of byTwo.values()) this.drop(group);
      return;
    }
    const group = byTwo.get(filter.slice(0, s2));
    if (group !== undefined) this.drop(group);
  }

  clear(): void {
    this.hits.clear();
    this.groups.clear();
    this.grouped = false;
    this.missedFull = 0;
  }

  private file(topic: string): void {
    const s1 = topic.indexOf("/");
    const first = s1 === -1 ? topic : topic.slice(0, s1);
    const s2 = s1 === -1 ? -1 : topic.indexOf("/", s1 + 1);
    const firstTwo = s2 === -1 ? topic : topic.slice(0, s2);
    let byTwo = this.groups.get(first);
    if (byTwo === undefined) this.groups.set(first, (byTwo = new Map()));
    const group = byTwo.get(firstTwo);
    if (group === undefined) byTwo.set(firstTwo, [topic]);
    else group.push(topic);
  }

  /** Forgets a group's topics; they stay filed (for the same reason as FORGOTTEN). */
  private drop(group: string[]): void {
    for (let i = 0; i < group.length; i++) this.hits.set(group[i], FORGOTTEN);
  }
}
