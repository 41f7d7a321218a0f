// SharedGroup: the members of one shared subscription group and the
// strategies that pick which single member receives each message.
//
// Spec references (MQTT 5.0, 4.8.2 Shared Subscriptions): each message
// matching a shared subscription is delivered to exactly one session of
// the group; how that session is chosen is left to the server. A session
// that cannot take the message (e.g. offline) is skipped via `accept`.

export type SharedStrategy = "random" | "round_robin" | "sticky" | "hash";

const FNV_OFFSET = 0x811c9dc5;
const FNV_PRIME = 0x01000193;

/** 32-bit FNV-1a over the UTF-16 code units of `s` (stable across runs). */
export function fnv1a(s: string): number {
  let h = FNV_OFFSET;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, FNV_PRIME);
  }
  return h >>> 0;
}

export class SharedGroup<M> {
  private readonly list: M[] = [];
  private readonly keys: string[] = [];
  private readonly index = new Map<M, number>();
  private rr = 0;
  private sticky: M | undefined = undefined;
  private hasSticky = false;
  private hashKey = "";
  private hashValue = FNV_OFFSET;
  private readonly random: () => number;

  /** @param random source of [0, 1) numbers for 'random' and first 'sticky' picks. */
  constructor(random: () => number = Math.random) {
    this.random = random;
  }

  /** Adds `member` (or updates its key if already present). */
  add(member: M, key: string): void {
    const i = this.index.get(member);
    if (i !== undefined) {
      this.keys[i] = key;
      return;
    }
    this.index.set(member, this.list.length);
    this.list.push(member);
    this.keys.push(key);
  }

  /** Removes `member` in O(1) (swap-remove: member order changes). */
  remove(member: M): boolean {
    const i = this.index.get(member);
    if (i === undefined) return false;
    this.index.delete(member);
    const lastIdx = this.list.length - 1;
    const last = this.list.pop() as M;
    const lastKey = this.keys.pop() as string;
    if (i !== lastIdx) {
      this.list[i] = last;
      this.keys[i] = lastKey;
      this.index.set(last, i);
    }
    if (this.hasSticky && this.sticky === member) {
      this.sticky = undefined;
      this.hasSticky = false;
    }
    return true;
  }

  has(member: M): boolean {
    return this.index.has(member);
  }

  /** The key given to add(), or undefined when not a member. */
  keyOf(member: M): string | undefined {
    const i = this.index.get(member);
    return i === undefined ? undefined : this.keys[i];
  }

  get size(): number {
    return this.list.length;
  }

  /** A snapshot of the members (safe to add/remove while iterating it). */
  members(): Iterable<M> {
    return this.list.slice();
  }

  /**
   * Picks the member that receives one message, or undefined when the
   * group is empty or no member is accepted.
   * - random: uniform choice.
   * - round_robin: per-group rotating index.
   * - sticky: the last picked member while it is still a member and
   *   accepted; otherwise a random accepted member, which becomes sticky.
   * - hash: FNV-1a of `fromClientId` (of `topic` when the client id is
   *   empty) modulo the member count: stable while membership is unchanged.
   * When the chosen member is rejected by `accept`, the following members
   * (in storage order, wrapping) are tried.
   */
  pick(strategy: SharedStrategy, fromClientId: string, topic: string, accept?: (m: M) => boolean): M | undefined {
    const n = this.list.length;
    if (n === 0) return undefined;
    let start: number;
    switch (strategy) {
      case "round_robin": {
        start = this.rr % n;
        const i = this.firstAccepted(start, accept);
        if (i >= 0) this.rr = i + 1 === n ? 0 : i + 1;
        return i >= 0 ? this.list[i] : undefined;
      }
      case "sticky": {
        if (this.hasSticky) {
          const s = this.sticky as M;
          if (accept === undefined || accept(s)) return s;
        }
        start = this.randomIndex(n);
        const i = this.firstAccepted(start, accept);
        if (i < 0) return undefined;
        const m = this.list[i];
        this.sticky = m;
        this.hasSticky = true;
        return m;
      }
      case "hash": {
        const key = fromClientId.length > 0 ? fromClientId : topic;
        if (key !== this.hashKey) {
          this.hashKey = key;
          this.hashValue = fnv1a(key);
        }
        start = this.hashValue % n;
        break;
      }
      default:
        start = this.randomIndex(n);
        break;
    }
    const i = this.firstAccepted(start, accept);
    return i >= 0 ? this.list[i] : undefined;
  }

  private randomIndex(n: number): number {
    const i = Math.floor(this.random() * n);
    return i >= 0 && i < n ? i : 0;
  }

  /** Index of the first accepted member from `start` (wrapping), or -1. */
  private firstAccepted(start: number, accept: ((m: M) => boolean) | undefined): number {
    if (accept === undefined) return start;
    const list = this.list;
    const n = list.length;
    let i = start;
    for (let k = 0; k < n; k++) {
      if (accept(list[i])) return i;
      i = i + 1 === n ? 0 : i + 1;
    }
    return -1;
  }
}
