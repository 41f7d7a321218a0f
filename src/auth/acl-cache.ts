// The per-client ACL cache (emqx-facts §5: `enable_acl_cache`, `acl_cache_max_size`,
// `acl_cache_ttl`): the last decisions of one connection by (access, topic), so a client publishing
// to the same topics does not run the rule chain each time. An entry older than the TTL is not used;
// a full cache drops its oldest entry. Entries have the spec's shape (section 2, "ACL cache entry":
// `access`, `result`, `topic`, `updated_time` in ms). Caches hang off the connection's ClientInfo
// (a symbol-keyed property: they go with the connection); clearing every cache (ACL reload) bumps
// a generation that each cache checks when next used.

import { now as brokerNow } from "../broker/clock.ts";
import type { AclAction, AclResult } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";

export interface AclCacheEntry {
  access: AclAction;
  result: AclResult;
  topic: string;
  /** Milliseconds since the epoch when the decision was made. */
  updated_time: number;
}

export interface AclCacheSettings {
  maxSize: number;
  /** ms. */
  ttl: number;
}

interface Cached extends AclCacheEntry {
  /** Insertion order across both maps (oldest first, for listing and eviction). */
  seq: number;
}

/** One client's decisions: publish and subscribe apart, keyed by the topic itself (no key built per check). */
interface ClientCache {
  gen: number;
  pub: Map<string, Cached>;
  sub: Map<string, Cached>;
}

/** A client's cache, on its ClientInfo (a property read, cheaper per check than a WeakMap). */
const CACHE = Symbol("acl-cache");
type CachedClient = ClientInfo & { [CACHE]?: ClientCache };

export class AclCaches {
  private generation = 0;
  private seq = 0;

  constructor(
    private readonly settings: AclCacheSettings,
    // The broker's clock: inside a socket read, the read's time (no clock read per PUBLISH).
    private readonly now: () => number = brokerNow,
  ) {}

  private cacheOf(client: ClientInfo, create: boolean): ClientCache | undefined {
    let c = (client as CachedClient)[CACHE];
    if (c !== undefined && c.gen !== this.generation) {
      c.pub.clear();
      c.sub.clear();
      c.gen = this.generation;
    }
    if (c === undefined && create) {
      c = { gen: this.generation, pub: new Map(), sub: new Map() };
      (client as CachedClient)[CACHE] = c;
    }
    return c;
  }

  /** A cached decision still within its TTL. */
  get(client: ClientInfo, action: AclAction, topic: string): AclResult | undefined {
    const c = this.cacheOf(client, false);
    if (c === undefined) return undefined;
    const map = action === "publish" ? c.pub : c.sub;
    const e = map.get(topic);
    if (e === undefined) return undefined;
    if (this.now() - e.updated_time >= this.settings.ttl) {
      map.delete(topic);
      return undefined;
    }
    return e.result;
  }

  put(client: ClientInfo, action: AclAction, topic: string, result: AclResult): void {
    const c = this.cacheOf(client, true) as ClientCache;
    const map = action === "publish" ? c.pub : c.sub;
    const now = this.now();
    map.delete(topic);
    // A full cache drops its oldest entry, the first of one of the two maps (an entry moves to the
    // end when made again, so the maps are in age order and an expired entry goes first): one
    // step per put, not a scan of the cache.
    while (c.pub.size + c.sub.size >= this.settings.maxSize) {
      const p = c.pub.values().next().value;
      const q = c.sub.values().next().value;
      if (p !== undefined && (q === undefined || p.seq < q.seq)) c.pub.delete(p.topic);
      else if (q !== undefined) c.sub.delete(q.topic);
      else break;
    }
    map.set(topic, { access: action, result, topic, updated_time: now, seq: this.seq++ });
  }

  /** The valid entries of a client, oldest first. */
  entries(client: ClientInfo): AclCacheEntry[] {
    const c = this.cacheOf(client, false);
    if (c === undefined) return [];
    const now = this.now();
    return [...c.pub.values(), ...c.sub.values()]
      .filter((e) => now - e.updated_time < this.settings.ttl)
      .sort((a, b) => a.seq - b.seq)
      .map((e) => ({ access: e.access, result: e.result, topic: e.topic, updated_time: e.updated_time }));
  }

  clear(client: ClientInfo): void {
    const c = (client as CachedClient)[CACHE];
    c?.pub.clear();
    c?.sub.clear();
  }

  /** Empties every client's cache (each is emptied when next used). */
  clearAll(): void {
    this.generation++;
  }
}
