// The per-client ACL cache (emqx-facts §5: `enable_acl_cache`, `acl_cache_max_size`,
// `acl_cache_ttl`): the last decisions of one connection by (access, topic), so a client publishing
// to the same topics does not run the rule chain each time. An entry older than the TTL is not used;
// a full cache drops its oldest entry. Entries have the spec's shape (section 2, "ACL cache entry":
// `access`, `result`, `topic`, `updated_time` in ms). Caches hang off the connection's ClientInfo
// (a WeakMap: they go with the connection); clearing every cache (ACL reload) bumps a generation
// that each cache checks when next used.

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

interface ClientCache {
  gen: number;
  map: Map<string, AclCacheEntry>;
}

const keyOf = (action: AclAction, topic: string): string => (action === "publish" ? "p" : "s") + topic;

export class AclCaches {
  private readonly byClient = new WeakMap<ClientInfo, ClientCache>();
  private generation = 0;

  constructor(
    private readonly settings: AclCacheSettings,
    private readonly now: () => number = Date.now,
  ) {}

  private cacheOf(client: ClientInfo, create: boolean): ClientCache | undefined {
    let c = this.byClient.get(client);
    if (c !== undefined && c.gen !== this.generation) {
      c.map.clear();
      c.gen = this.generation;
    }
    if (c === undefined && create) {
      c = { gen: this.generation, map: new Map() };
      this.byClient.set(client, c);
    }
    return c;
  }

  /** A cached decision still within its TTL. */
  get(client: ClientInfo, action: AclAction, topic: string): AclResult | undefined {
    const c = this.cacheOf(client, false);
    if (c === undefined) return undefined;
    const k = keyOf(action, topic);
    const e = c.map.get(k);
    if (e === undefined) return undefined;
    if (this.now() - e.updated_time >= this.settings.ttl) {
      c.map.delete(k);
      return undefined;
    }
    return e.result;
  }

  put(client: ClientInfo, action: AclAction, topic: string, result: AclResult): void {
    const c = this.cacheOf(client, true) as ClientCache;
    const k = keyOf(action, topic);
    const now = this.now();
    c.map.delete(k);
    if (c.map.size >= this.settings.maxSize) {
      for (const [key, e] of c.map) if (now - e.updated_time >= this.settings.ttl) c.map.delete(key);
      while (c.map.size >= this.settings.maxSize) c.map.delete(c.map.keys().next().value as string);
    }
    c.map.set(k, { access: action, result, topic, updated_time: now });
  }

  /** The valid entries of a client, oldest first. */
  entries(client: ClientInfo): AclCacheEntry[] {
    const c = this.cacheOf(client, false);
    if (c === undefined) return [];
    const now = this.now();
    return [...c.map.values()].filter((e) => now - e.updated_time < this.settings.ttl).map((e) => ({ ...e }));
  }

  clear(client: ClientInfo): void {
    this.byClient.get(client)?.map.clear();
  }

  /** Empties every client's cache (each is emptied when next used). */
  clearAll(): void {
    this.generation++;
  }
}
