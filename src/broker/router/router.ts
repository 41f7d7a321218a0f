// Local routing table: topic filter -> local subscribers (plain and shared groups). Exact filters
// live in a Map, wildcard filters in a trie beside it, so a publish to a topic nobody subscribes
// with wildcards costs one Map lookup. Route listeners (cluster route sync) hear when a filter
// gets its first subscriber or loses its last.

import { isWildcard, startsWithDollar } from "../../mqtt/topic.ts";
import { ChurnMap } from "../churn-map.ts";
import type { Message, SubOpts } from "../types.ts";
import { SharedGroup, type SharedStrategy } from "./shared-strategy.ts";
import { TopicTrie } from "./topic-trie.ts";
import { WildCache } from "./wild-cache.ts";

/** Anything that can receive messages through the router (a session). */
export interface Subscriber {
  readonly clientId: string;
  /** The subscriber's own subscription table (shared ones under their `$share/...` key). */
  readonly subscriptions: ReadonlyMap<string, SubOpts>;
  isOnline(): boolean;
  deliver(msg: Message, opts: SubOpts): void;
}

export interface RouteEntry {
  readonly filter: string;
  /**
   * The plain subscriber while the filter has exactly one (most filters: a device's own topics),
   * with no Map for it; `subs` holds them once there were two, until none is left.
   */
  one: Subscriber | null;
  oneOpts: SubOpts | null;
  subs: Map<Subscriber, SubOpts> | null;
  shared: Map<string, SharedGroup<Subscriber>> | undefined;
}

function plainCount(e: RouteEntry): number {
  return e.one !== null ? 1 : e.subs === null ? 0 : e.subs.size;
}

function hasPlain(e: RouteEntry, sub: Subscriber): boolean {
  return e.one === sub || e.subs?.has(sub) === true;
}

function setPlain(e: RouteEntry, sub: Subscriber, opts: SubOpts): void {
  if (e.subs !== null) e.subs.set(sub, opts);
  else if (e.one === null || e.one === sub) {
    e.one = sub;
    e.oneOpts = opts;
  } else {
    e.subs = new Map([
      [e.one, e.oneOpts as SubOpts],
      [sub, opts],
    ]);
    e.one = null;
    e.oneOpts = null;
  }
}

function deletePlain(e: RouteEntry, sub: Subscriber): boolean {
  if (e.one === sub) {
    e.one = null;
    e.oneOpts = null;
    return true;
  }
  if (e.subs === null || !e.subs.delete(sub)) return false;
  if (e.subs.size === 0) e.subs = null;
  return true;
}

export interface RouteListener {
  /** A filter got its first plain (non-shared) local subscriber. */
  routeAdded(filter: string): void;
  /** A filter lost its last plain local subscriber. */
  routeRemoved(filter: string): void;
  /** A shared group got its first local member on `filter`. */
  sharedAdded?(filter: string, group: string): void;
  /** A shared group lost its last local member on `filter`. */
  sharedRemoved?(filter: string, group: string): void;
}

/**
 * Decides, in a cluster, whether this node delivers `msg` to its members of a shared group (one
 * member in the whole cluster gets each message). Absent on a single node: always yes.
 */
export type SharedGate = (msg: Message, filter: string, group: string) => boolean;

const online = (s: Subscriber): boolean => s.isOnline();

/** Topics whose wildcard matches are remembered (the cache starts over beyond this). */
const WILD_CACHE_LIMIT = 16_384;

/** Versions of route tables, never repeated within the process (the /routes views cache by them). */
let versions = 0;

/** A route table version no table of this process had before. */
export function nextRouteVersion(): number {
  return ++versions;
}

export class Router {
  /**
   * Every filter; a topic name never contains wildcards, so get(topic) finds exact filters only.
   * A ChurnMap: a filter subscribed and unsubscribed over and over (a request/response client's
   * reply topic) would otherwise make the lookup of every publish to it ever longer.
   */
  private readonly entries = new ChurnMap<string, RouteEntry>();
  private readonly wild = new TopicTrie<RouteEntry>();
  /**
   * The wildcard entries matching a topic, per topic recently published. A wildcard filter added
   * or removed forgets the topics it could match (wild-cache.ts); the entries' subscribers may
   * change freely: the cache holds the entries.
   */
  private readonly wildCache = new WildCache<RouteEntry>(WILD_CACHE_LIMIT);
  private readonly listeners: RouteListener[] = [];
  /**
   * Filters starting with '$' ($SYS/#...). Only they can match a topic starting with '$'
   * [MQTT-4.7.2-1]: while there are none, '$' topics (the node's $SYS messages; its presence
   * messages when another node or a hook hears of them: Broker.systemAudience) skip routing. '$'
   * topics never go into wildCache: a presence topic per connect would only push out the topics
   * published again.
   */
  private dollarFilters = 0;
  /** Set by the cluster: which shared groups this node serves for a message. */
  sharedGate: SharedGate | null = null;
  /** Changes whenever a filter gets its first subscriber or loses its last (filters()). */
  version = nextRouteVersion();
  /** Counts for statistics. */
  subscriptionCount = 0;
  sharedCount = 0;

  addListener(l: RouteListener): void {
    this.listeners.push(l);
  }

  private entry(filter: string): RouteEntry | undefined {
    return this.entries.get(filter);
  }

  /** Adds or updates a subscription; `group` set for shared subscriptions. */
  add(filter: string, sub: Subscriber, opts: SubOpts, group: string | undefined): void {
    let e = this.entry(filter);
    if (e === undefined) {
      e = { filter, one: null, oneOpts: null, subs: null, shared: undefined };
      this.entries.set(filter, e);
      this.version = nextRouteVersion();
      if (startsWithDollar(filter)) this.dollarFilters++;
      if (isWildcard(filter)) {
        this.wild.set(filter, e);
        this.wildCache.forget(filter);
      }
    }
    if (group === undefined) {
      if (!hasPlain(e, sub)) {
        this.subscriptionCount++;
        if (plainCount(e) === 0) for (const l of this.listeners) l.routeAdded(filter);
      }
      setPlain(e, sub, opts);
      return;
    }
    e.shared ??= new Map();
    let g = e.shared.get(group);
    if (g === undefined) {
      g = new SharedGroup<Subscriber>();
      e.shared.set(group, g);
      for (const l of this.listeners) l.sharedAdded?.(filter, group);
    }
    const before = g.size;
    g.add(sub, sub.clientId);
    if (g.size > before) {
      this.subscriptionCount++;
      this.sharedCount++;
    }
  }

  remove(filter: string, sub: Subscriber, group: string | undefined): boolean {
    const e = this.entry(filter);
    if (e === undefined) return false;
    let removed = false;
    if (group === undefined) {
      removed = deletePlain(e, sub);
      if (removed) {
        this.subscriptionCount--;
        if (plainCount(e) === 0) for (const l of this.listeners) l.routeRemoved(filter);
      }
    } else {
      const g = e.shared?.get(group);
      if (g?.remove(sub)) {
        removed = true;
        this.subscriptionCount--;
        this.sharedCount--;
        if (g.size === 0) {
          e.shared?.delete(group);
          for (const l of this.listeners) l.sharedRemoved?.(filter, group);
        }
      }
    }
    if (plainCount(e) === 0 && (e.shared === undefined || e.shared.size === 0)) {
      this.entries.delete(filter);
      this.version = nextRouteVersion();
      if (startsWithDollar(filter)) this.dollarFilters--;
      if (isWildcard(filter)) {
        this.wild.delete(filter);
        this.wildCache.forget(filter);
      }
    }
    return removed;
  }

  /**
   * Delivers `msg` to every matching local subscriber (one member per shared group) and returns
   * the number of deliveries.
   */
  dispatch(msg: Message, strategy: SharedStrategy): number {
    const topic = msg.topic;
    const dollar = startsWithDollar(topic);
    if (dollar && this.dollarFilters === 0) return 0;
    let n = 0;
    const e = this.entries.get(topic);
    if (e !== undefined) n += this.dispatchEntry(e, msg, strategy);
    if (this.wild.size > 0) {
      const hits = dollar ? this.matchWild(topic) : (this.wildCache.get(topic) ?? this.cacheWild(topic));
      for (let i = 0; i < hits.length; i++) n += this.dispatchEntry(hits[i], msg, strategy);
    }
    return n;
  }

  /** The wildcard entries matching `topic`, from the trie. */
  private matchWild(topic: string): RouteEntry[] {
    const hits: RouteEntry[] = [];
    this.wild.match(topic, (w) => {
      hits.push(w);
    });
    return hits;
  }

  /** matchWild, remembered in wildCache. */
  private cacheWild(topic: string): readonly RouteEntry[] {
    const hits = this.matchWild(topic);
    this.wildCache.set(topic, hits);
    return hits;
  }

  private dispatchEntry(e: RouteEntry, msg: Message, strategy: SharedStrategy): number {
    let n = 0;
    const one = e.one;
    if (one !== null) {
      one.deliver(msg, e.oneOpts as SubOpts);
      n++;
    } else if (e.subs !== null) {
      for (const [sub, opts] of e.subs) {
        sub.deliver(msg, opts);
        n++;
      }
    }
    if (e.shared !== undefined) {
      const gate = this.sharedGate;
      for (const [group, g] of e.shared) {
        if (gate !== null && !gate(msg, e.filter, group)) continue;
        const m = this.pickMember(g, strategy, msg);
        if (m === undefined) continue;
        const opts = this.sharedOpts(m, group, e.filter);
        if (opts === undefined) continue;
        m.deliver(msg, opts);
        n++;
      }
    }
    return n;
  }

  private pickMember(g: SharedGroup<Subscriber>, strategy: SharedStrategy, msg: Message): Subscriber | undefined {
    // Prefer a connected member; an offline persistent member queues only when nobody is online.
    return g.pick(strategy, msg.from, msg.topic, online) ?? g.pick(strategy, msg.from, msg.topic);
  }

  /** Redispatches a message a departed member never acknowledged to another member [shared sub]. */
  redispatchShared(
    msg: Message,
    filter: string,
    group: string,
    strategy: SharedStrategy,
    exclude: Subscriber,
  ): boolean {
    const g = this.entry(filter)?.shared?.get(group);
    if (g === undefined) return false;
    const accept = (s: Subscriber) => s !== exclude && s.isOnline();
    const m =
      g.pick(strategy, msg.from, msg.topic, accept) ?? g.pick(strategy, msg.from, msg.topic, (s) => s !== exclude);
    if (m === undefined) return false;
    const opts = this.sharedOpts(m, group, filter);
    if (opts === undefined) return false;
    m.deliver(msg, opts);
    return true;
  }

  private sharedOpts(m: Subscriber, group: string, filter: string): SubOpts | undefined {
    return m.subscriptions.get(sharedKey(group, filter));
  }

  hasRoute(filter: string): boolean {
    return this.entry(filter) !== undefined;
  }

  /** Whether any filter starts with '$': only such a filter can match a '$' topic. */
  hasDollarFilters(): boolean {
    return this.dollarFilters > 0;
  }

  /** Every filter with at least one local subscriber. */
  filters(): Iterable<string> {
    return this.entries.keys();
  }

  /** Local subscribers of one filter (plain and shared), for the management views. */
  entryOf(filter: string): RouteEntry | undefined {
    return this.entries.get(filter);
  }

  get routeCount(): number {
    return this.entries.size;
  }
}

/** The subscription key a session stores for a shared subscription. */
export function sharedKey(group: string, filter: string): string {
  return group === "$queue" ? `$queue/${filter}` : `$share/${group}/${filter}`;
}
