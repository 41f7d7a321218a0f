// The router's wildcard matches per published topic, so dispatch neither splits a topic nor walks
// the trie for a topic published before. A topic's matches change only when a wildcard filter
// that can match it comes or goes, and such a filter can only match topics that start with its
// literal levels (those before its first '+' or '#'). So a filter forgets the topics under its
// first two literal levels (`dev/42/cmd/#`: every cached `dev/42/...`), or under its first one
// (`dev/+/state`: every `dev/...`); only a filter starting with a wildcard forgets them all. A
// client subscribing to a filter of its own (`dev/<id>/cmd/#`) as it connects then leaves every
// other device's topics cached. Bounded: past `limit` topics it starts over.
//
// A forgotten topic keeps its key, marked FORGOTTEN, until the cache starts over: V8's Map leaves
// a deleted entry in its bucket's chain until the table is rebuilt, so a topic deleted and added
// again on every reconnect of one client would make its own lookups ever longer.

const FORGOTTEN: readonly never[] = [];

export class WildCache<V> {
  private readonly hits = new Map<string, readonly V[]>();
  /** Cached topics by first level, then by first two levels (`dev` -> `dev/42` -> topics). */
  private readonly groups = new Map<string, Map<string, string[]>>();

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
    if (this.hits.size >= this.limit) this.clear();
    const old = this.hits.get(topic);
    this.hits.set(topic, matches);
    if (old !== undefined && old !== FORGOTTEN) return; // already filed under its group
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

  /** A wildcard filter came or went: forgets every topic it could match. */
  forget(filter: string): void {
    const s1 = filter.indexOf("/");
    const first = s1 === -1 ? filter : filter.slice(0, s1);
    if (first === "+" || first === "#") {
      this.clear();
      return;
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
  }

  /** Forgets a group's topics; the emptied group stays (for the same reason as FORGOTTEN). */
  private drop(group: string[]): void {
    for (let i = 0; i < group.length; i++) this.hits.set(group[i], FORGOTTEN);
    group.length = 0;
  }
}
