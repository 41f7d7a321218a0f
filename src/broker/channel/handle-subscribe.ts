// SUBSCRIBE (MQTT 5.0 section 3.8): the `client.subscribe` hook may rewrite the list, then each
// filter is checked (syntax, shared and wildcard availability, quota, ACL), SUBACK carries one
// code per filter [MQTT-3.8.4-6], and only then are the subscriptions made (so retained messages
// follow the SUBACK).

import type { ISubscribePacket } from "mqtt-packet";
import { RC } from "../../mqtt/reason-codes.ts";
import { encodeSuback } from "../../mqtt/subscribe-codec.ts";
import { isWildcard, parseSharedFilter, validateTopicFilter } from "../../mqtt/topic.ts";
import type { AclResult, TopicFilterReq } from "../hookpoints.ts";
import { M } from "../metrics.ts";
import type { QoS } from "../types.ts";
import type { Channel } from "./channel.ts";
import { disconnectWith, protocolError } from "./reply.ts";

export function handleSubscribe(ch: Channel, p: ISubscribePacket): void | Promise<void> {
  const m = ch.broker.metrics;
  m.inc(M.subscribeReceived);
  const v5 = ch.protoVer === 5;
  // [MQTT-2.3.1-1] a non-zero packet id; [MQTT-3.8.3-3] at least one topic filter.
  if (!p.messageId) return protocolError(ch, "SUBSCRIBE with packet id 0");
  if (p.subscriptions.length === 0) return protocolError(ch, "SUBSCRIBE without topic filters");
  const subId = p.properties?.subscriptionIdentifier ?? 0;
  const reqs: TopicFilterReq[] = [];
  for (const s of p.subscriptions) {
    const group = parseSharedFilter(s.topic)?.group;
    // [MQTT-3.8.3-4] No Local on a shared subscription is a protocol error.
    if (group !== undefined && s.nl === true && v5) return protocolError(ch, "no local on a shared subscription");
    reqs.push({
      filter: s.topic,
      opts: { qos: s.qos, nl: s.nl === true, rap: s.rap === true, rh: (s.rh ?? 0) as 0 | 1 | 2, subId, share: group },
    });
  }
  const list = ch.broker.hooks.fold("client.subscribe", [ch.client, reqs], reqs) as TopicFilterReq[];
  const zone = ch.zone;
  for (const r of list) {
    if (r.rc !== undefined) continue;
    // 5.0: after CONNACK announced no shared / wildcard support, using it is a protocol error
    // answered with DISCONNECT 0x9E / 0xA2 [MQTT-3.2.2-?, section 3.2.2.3.11 and .13].
    if (v5 && r.opts.share !== undefined && !zone.sharedSubscription) {
      return disconnectWith(ch, RC.SHARED_SUBSCRIPTIONS_NOT_SUPPORTED, "shared subscriptions not available");
    }
    if (v5 && !zone.wildcardSubscription && isWildcard(r.filter)) {
      return disconnectWith(ch, RC.WILDCARD_SUBSCRIPTIONS_NOT_SUPPORTED, "wildcard subscriptions not available");
    }
    if (!validateTopicFilter(r.filter, zone.maxTopicLevels)) r.rc = RC.TOPIC_FILTER_INVALID;
    else if (r.opts.share !== undefined && !zone.sharedSubscription) r.rc = RC.SHARED_SUBSCRIPTIONS_NOT_SUPPORTED;
    else if (!zone.wildcardSubscription && isWildcard(r.filter)) r.rc = RC.WILDCARD_SUBSCRIPTIONS_NOT_SUPPORTED;
    else if (
      zone.maxSubscriptions > 0 &&
      ch.session !== null &&
      !ch.session.subscriptions.has(r.filter) &&
      ch.session.subscriptions.size >= zone.maxSubscriptions
    )
      r.rc = RC.QUOTA_EXCEEDED;
    if (r.opts.qos > zone.maxQosAllowed) r.opts.qos = zone.maxQosAllowed as QoS;
  }
  if (ch.client.isSuperuser || !ch.broker.hooks.has("client.check_acl")) return subscribeChecked(ch, p, list);
  const pending: Promise<void>[] = [];
  for (const r of list) {
    if (r.rc !== undefined) continue;
    const res = ch.broker.hooks.fold(
      "client.check_acl",
      [ch.client, "subscribe", r.filter],
      "allow" as AclResult,
      "deny",
    );
    if (res instanceof Promise) {
      pending.push(
        res.then((v) => {
          if (v === "deny") r.rc = RC.NOT_AUTHORIZED;
        }),
      );
    } else if (res === "deny") r.rc = RC.NOT_AUTHORIZED;
  }
  if (pending.length > 0) return Promise.all(pending).then(() => subscribeChecked(ch, p, list));
  return subscribeChecked(ch, p, list);
}

function subscribeChecked(ch: Channel, p: ISubscribePacket, list: TopicFilterReq[]): void {
  if (ch.state !== "connected" || ch.session === null) return;
  const m = ch.broker.metrics;
  const v5 = ch.protoVer === 5;
  const granted: number[] = [];
  let denied = false;
  for (const r of list) {
    if (r.rc === undefined) granted.push(r.opts.qos);
    else {
      if (r.rc === RC.NOT_AUTHORIZED) {
        m.inc(M.subscribeAuthError);
        denied = true;
      } else m.inc(M.subscribeError);
      // 3.x has one failure code, 0x80 [MQTT-3.9.3-2].
      granted.push(v5 ? r.rc : 0x80);
    }
  }
  if (denied && ch.broker.aclDenyDisconnects(ch.client.zone)) {
    ch.kick(RC.NOT_AUTHORIZED, "subscribe_denied");
    return;
  }
  ch.conn.sendBytes(encodeSuback(p.messageId as number, granted, v5));
  m.inc(M.subackSent);
  for (const r of list) if (r.rc === undefined) ch.broker.subscribe(ch.session, r.filter, r.opts);
}
