// Subscription and route views, and subscribe/unsubscribe on behalf of a client (HTTP API
// `/mqtt/subscribe`, CLI `subscriptions add|del`). Expected outcomes are values, not exceptions.

import type { Broker } from "../broker/broker.ts";
import type { QoS } from "../broker/types.ts";
import { matchTopic, parseSharedFilter, validateTopicFilter } from "../mqtt/topic.ts";

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

export class SubscriptionService {
  constructor(private readonly broker: Broker) {}

  list(): SubscriptionRecord[] {
    const out: SubscriptionRecord[] = [];
    for (const s of this.broker.sessions.allSessions()) {
      for (const [topic, o] of s.subscriptions)
        out.push({ clientid: s.clientId, node: this.broker.nodeName, topic, qos: o.qos });
    }
    return out;
  }

  /** Subscriptions matching every given filter, in list order. */
  query(q: SubscriptionQuery): SubscriptionRecord[] {
    return this.list().filter((r) => {
      if (q.clientid !== undefined && r.clientid !== q.clientid) return false;
      if (q.qos !== undefined && r.qos !== q.qos) return false;
      const shared = parseSharedFilter(r.topic);
      const filter = shared === null ? r.topic : shared.filter;
      if (q.topic !== undefined && r.topic !== q.topic && filter !== q.topic) return false;
      if (q.share !== undefined && shared?.group !== q.share) return false;
      if (q.match_topic !== undefined && !matchTopic(filter, q.match_topic)) return false;
      return true;
    });
  }

  ofClient(clientId: string): SubscriptionRecord[] {
    const s = this.broker.sessions.lookup(clientId);
    if (s === undefined) return [];
    return [...s.subscriptions].map(([topic, o]) => ({
      clientid: clientId,
      node: this.broker.nodeName,
      topic,
      qos: o.qos,
    }));
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
