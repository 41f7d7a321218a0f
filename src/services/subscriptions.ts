// Subscription and route views, and subscribe/unsubscribe on behalf of a client (HTTP API
// `/mqtt/subscribe`, CLI `subscriptions add|del`). Expected outcomes are values, not exceptions.
// The synchronous methods answer for this node; the async `find*` and `*Anywhere` ones for the
// cluster (or one node) through ClusterCalls, and `clusterRoutes` reads the cluster route table
// this node keeps (its own filters plus the other nodes' routes it watches).

import type { Broker } from "../broker/broker.ts";
import type { Session } from "../broker/session/session.ts";
import type { QoS } from "../broker/types.ts";
import { matchTopic, parseSharedFilter, validateTopicFilter } from "../mqtt/topic.ts";
import {
  type ClusterCalls,
  fromEvery,
  type PageArgs,
  type PageOf,
  pageFrom,
  partOf,
  type Window,
} from "./cluster-calls.ts";

export interface SubscriptionRecord {
  clientid: string;
  node: string;
  topic: string;
  qos: number;
}

export interface RouteRecord {
  topic: string;
  node: string;
}

/** `/subscriptions` filters (emqx-facts §3.2). */
export interface SubscriptionQuery {
  clientid?: string;
  /** The filter as subscribed; a shared subscription `$share/<g>/<t>` matches on `<t>`. */
  topic?: string;
  qos?: number;
  /** Shared subscription group. */
  share?: string;
  /** A topic name the subscription's filter matches. */
  match_topic?: string;
}

export type SubscribeOutcome = "ok" | "client_not_online" | "bad_topic" | "bad_qos";

/** The other nodes' routes (the cluster route table as this node watches it). */
export interface RemoteRouteSource {
  /** `[filter, node]` pairs. */
  entries(): Iterable<[string, string]>;
  /** The nodes with a route for `filter`. */
  nodesOf(filter: string): string[];
  /** Changes whenever a route comes or goes. */
  readonly version: number;
}

/** A single node's: no other nodes. */
export const NO_REMOTE_ROUTES: RemoteRouteSource = { entries: () => [], nodesOf: () => [], version: 0 };

export class SubscriptionService {
  constructor(
    private readonly broker: Broker,
    private readonly calls: ClusterCalls,
    private readonly remoteRoutes: RemoteRouteSource = NO_REMOTE_ROUTES,
  ) {
    calls.register("mgmt.subscriptions", (a) => {
      const { q, w, exact } = a as PageArgs<SubscriptionQuery>;
      return partOf(this.query(q), w, (r) => r, exact);
    });
    calls.register("mgmt.clientSubscriptions", (a) => this.ofClient((a as { clientid: string }).clientid));
    calls.register("mgmt.subscribe", (a) => {
      const r = a as { clientid: string; topic: string; qos: number };
      return this.subscribe(r.clientid, r.topic, r.qos);
    });
    calls.register("mgmt.unsubscribe", (a) => {
      const r = a as { clientid: string; topic: string };
      return this.unsubscribe(r.clientid, r.topic);
    });
  }

  /** A page of the subscriptions matching `q`, in the cluster or on `node`, with the total count. */
  findPage(q: SubscriptionQuery, w: Window, node?: string): Promise<PageOf<SubscriptionRecord>> {
    return pageFrom(this.calls, "mgmt.subscriptions", q, w, node);
  }

  /** A client's subscriptions, in the cluster (where its session is) or on `node`. */
  async findOfClient(clientId: string, node?: string): Promise<SubscriptionRecord[]> {
    const args = { clientid: clientId };
    if (node !== undefined) return this.calls.call<SubscriptionRecord[]>(node, "mgmt.clientSubscriptions", args);
    const answers = await fromEvery<SubscriptionRecord[]>(this.calls, "mgmt.clientSubscriptions", args);
    return answers.flatMap((a) => a.value);
  }

  /** Subscribes the client's session on whichever node holds it. */
  subscribeAnywhere(clientId: string, topic: string, qos: number): Promise<SubscribeOutcome> {
    const local = this.subscribe(clientId, topic, qos);
    if (local !== "client_not_online") return Promise.resolve(local);
    return this.onOwner("mgmt.subscribe", { clientid: clientId, topic, qos });
  }

  /** Unsubscribes the client's session on whichever node holds it. */
  unsubscribeAnywhere(clientId: string, topic: string): Promise<SubscribeOutcome> {
    const local = this.unsubscribe(clientId, topic);
    if (local !== "client_not_online") return Promise.resolve(local);
    return this.onOwner("mgmt.unsubscribe", { clientid: clientId, topic });
  }

  /**
   * Asks every other node; the one holding the session answers something else than
   * client_not_online. When none holds it but one did not answer, that is a failed call.
   */
  private async onOwner(
    method: string,
    args: { clientid: string; topic: string; qos?: number },
  ): Promise<SubscribeOutcome> {
    const others = this.calls.nodes().filter((n) => n !== this.calls.self);
    const settled = await Promise.allSettled(others.map((n) => this.calls.call<SubscribeOutcome>(n, method, args)));
    let failure: unknown;
    for (const s of settled) {
      if (s.status === "rejected") failure ??= s.reason;
      else if (s.value !== "client_not_online") return s.value;
    }
    if (failure !== undefined) throw failure;
    return "client_not_online";
  }

  /**
   * The cluster route table: this node's filters and the other nodes' routes, sorted by node name
   * then filter, so every node answers the same table in the same order (pages are stable). Built
   * and sorted once per version of the two tables: the pages of an unchanged table read the same
   * array (not to be changed by the caller).
   */
  clusterRoutes(): readonly RouteRecord[] {
    const local = this.broker.router.version;
    const remote = this.remoteRoutes.version;
    const c = this.routeTable;
    if (c !== null && c.local === local && c.remote === remote) return c.rows;
    const rows = this.routes();
    for (const [topic, node] of this.remoteRoutes.entries()) rows.push({ topic, node });
    rows.sort((a, b) => byNode(a, b) || (a.topic < b.topic ? -1 : a.topic > b.topic ? 1 : 0));
    this.routeTable = { local, remote, rows };
    return rows;
  }

  private routeTable: { local: number; remote: number; rows: RouteRecord[] } | null = null;

  /** The cluster's routes of one filter. */
  clusterRoute(topic: string): RouteRecord[] {
    const out = this.route(topic);
    for (const node of this.remoteRoutes.nodesOf(topic)) out.push({ topic, node });
    return out.sort(byNode);
  }

  list(): SubscriptionRecord[] {
    return this.query({});
  }

  /** Every session, or the one of `clientId` when given (none when it has no session here). */
  private sessionsOf(clientId: string | undefined): Iterable<Session> {
    if (clientId === undefined) return this.broker.sessions.allSessions();
    const s = this.broker.sessions.lookup(clientId);
    return s === undefined ? [] : [s];
  }

  /** Subscriptions matching every given filter, in list order (a clientid: its session only). */
  query(q: SubscriptionQuery): SubscriptionRecord[] {
    const out: SubscriptionRecord[] = [];
    for (const s of this.sessionsOf(q.clientid)) {
      for (const [topic, o] of s.subscriptions) {
        if (q.qos !== undefined && o.qos !== q.qos) continue;
        const shared = parseSharedFilter(topic);
        const filter = shared === null ? topic : shared.filter;
        if (q.topic !== undefined && topic !== q.topic && filter !== q.topic) continue;
        if (q.share !== undefined && shared?.group !== q.share) continue;
        if (q.match_topic !== undefined && !matchTopic(filter, q.match_topic)) continue;
        out.push({ clientid: s.clientId, node: this.broker.nodeName, topic, qos: o.qos });
      }
    }
    return out;
  }

  ofClient(clientId: string): SubscriptionRecord[] {
    return this.query({ clientid: clientId });
  }

  /** Subscribes an existing session (the client must have one on this node). */
  subscribe(clientId: string, topic: string, qos: number): SubscribeOutcome {
    const s = this.broker.sessions.lookup(clientId);
    if (s === undefined) return "client_not_online";
    if (qos !== 0 && qos !== 1 && qos !== 2) return "bad_qos";
    if (!validateTopicFilter(topic, s.zone.maxTopicLevels)) return "bad_topic";
    const group = parseSharedFilter(topic)?.group;
    this.broker.subscribe(s, topic, { qos: qos as QoS, nl: false, rap: false, rh: 0, subId: 0, share: group });
    return "ok";
  }

  unsubscribe(clientId: string, topic: string): SubscribeOutcome {
    const s = this.broker.sessions.lookup(clientId);
    if (s === undefined) return "client_not_online";
    if (!validateTopicFilter(topic, s.zone.maxTopicLevels)) return "bad_topic";
    this.broker.unsubscribe(s, topic);
    return "ok";
  }

  routes(): RouteRecord[] {
    return [...this.broker.router.filters()].map((topic) => ({ topic, node: this.broker.nodeName }));
  }

  route(topic: string): RouteRecord[] {
    return this.broker.router.hasRoute(topic) ? [{ topic, node: this.broker.nodeName }] : [];
  }
}

/** Stable sort key of cluster views: the node name (rows of one node keep their order). */
function byNode(a: { node: string }, b: { node: string }): number {
  return a.node < b.node ? -1 : a.node > b.node ? 1 : 0;
}
