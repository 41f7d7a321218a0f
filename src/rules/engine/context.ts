// Event contexts: the columns of each RULE_EVENTS entry (both dialects' spellings), built from
// the broker's hook arguments. Built in the engine's worker, off the hook that saw the event.

import type { ConnectedInfo, TopicFilterReq } from "../../broker/hookpoints.ts";
import { type ClientInfo, type Message, type MessageProps, messageId, type SubOpts } from "../../broker/types.ts";
import type { Row } from "../runtime/values.ts";

function userProps(p: MessageProps | undefined): Row {
  const up = p?.userProperties;
  if (up === undefined) return {};
  const pairs: { key: string; value: string }[] = [];
  for (const [key, v] of Object.entries(up))
    for (const value of Array.isArray(v) ? v : [v]) pairs.push({ key, value: String(value) });
  return { "User-Property": Object.fromEntries(pairs.map((x) => [x.key, x.value])), "User-Property-Pairs": pairs };
}

function pubProps(p: MessageProps | undefined): Row {
  if (p === undefined) return {};
  const out: Row = userProps(p);
  if (p.payloadFormatIndicator !== undefined) out["Payload-Format-Indicator"] = p.payloadFormatIndicator ? 1 : 0;
  if (p.messageExpiryInterval !== undefined) out["Message-Expiry-Interval"] = p.messageExpiryInterval;
  if (p.contentType !== undefined) out["Content-Type"] = p.contentType;
  if (p.responseTopic !== undefined) out["Response-Topic"] = p.responseTopic;
  if (p.correlationData !== undefined) out["Correlation-Data"] = p.correlationData;
  return out;
}

function tail(ctx: Row, node: string): Row {
  ctx.timestamp = Date.now();
  ctx.node = node;
  return ctx;
}

function messageCols(m: Message): Row {
  return {
    id: messageId(m),
    payload: m.payload,
    peerhost: m.peerhost,
    peername: m.peerhost,
    topic: m.topic,
    qos: m.qos,
    flags: { retain: m.retain, dup: false },
    retain: m.retain ? 1 : 0,
    headers: headersOf(m),
    pub_props: pubProps(m.properties),
    publish_received_at: m.timestamp,
  };
}

function clientCols(c: ClientInfo): Row {
  return {
    clientid: c.clientId,
    client_id: c.clientId,
    username: c.username ?? null,
    peerhost: c.peerHost,
    peername: `${c.peerHost}:${c.peerPort}`,
    sockname: `0.0.0.0:${c.sockPort}`,
    proto_name: c.protoName,
    proto_ver: c.protoVer,
    mountpoint: c.mountpoint ?? null,
  };
}

// Sub-objects every publish event without properties shares (rows are read-only).
const FLAGS_RETAIN = Object.freeze({ retain: true, dup: false });
const FLAGS_NONE = Object.freeze({ retain: false, dup: false });
const NO_PROPS = Object.freeze({});

// The headers column of the last message asked for, shared by the next from the same peer and user
// (messages come in runs from one connection).
let lastPeer = "";
let lastUser: string | null = null;
let lastHeaders: Row | null = null;

function headersOf(m: Message): Row {
  const user = m.fromUsername ?? null;
  if (lastHeaders !== null && m.peerhost === lastPeer && user === lastUser) return lastHeaders;
  lastPeer = m.peerhost;
  lastUser = user;
  lastHeaders = Object.freeze({ peerhost: m.peerhost, protocol: "mqtt", username: user });
  return lastHeaders;
}

export function publishCtx(m: Message, node: string): Row {
  // messageCols and tail written out in one literal (the same keys in the same order): one
  // object of a fixed shape, the hottest context.
  return {
    event: "message.publish",
    clientid: m.from,
    client_id: m.from,
    username: m.fromUsername ?? null,
    id: messageId(m),
    payload: m.payload,
    peerhost: m.peerhost,
    peername: m.peerhost,
    topic: m.topic,
    qos: m.qos,
    flags: m.retain ? FLAGS_RETAIN : FLAGS_NONE,
    retain: m.retain ? 1 : 0,
    headers: headersOf(m),
    pub_props: m.properties === undefined ? NO_PROPS : pubProps(m.properties),
    publish_received_at: m.timestamp,
    // The event happens when the message is published (the family builds this context in the
    // publish hook, so its timestamp is the arrival's millisecond too).
    timestamp: m.timestamp,
    node,
  };
}

export function deliveredCtx(
  event: "message.delivered" | "message.acked",
  c: ClientInfo,
  m: Message,
  node: string,
): Row {
  const ctx: Row = {
    event,
    from_clientid: m.from,
    from_username: m.fromUsername ?? null,
    clientid: c.clientId,
    client_id: c.clientId,
    username: c.username ?? null,
    ...messageCols(m),
  };
  if (event === "message.delivered") {
    ctx.auth_result = "success";
    ctx.mountpoint = c.mountpoint ?? null;
  } else ctx.puback_props = {};
  return tail(ctx, node);
}

export function droppedCtx(m: Message, reason: string, node: string): Row {
  return tail(
    {
      event: "message.dropped",
      reason,
      clientid: m.from,
      client_id: m.from,
      username: m.fromUsername ?? null,
      ...messageCols(m),
    },
    node,
  );
}

/** delivery.dropped: a message not delivered to one subscriber (4.3+ columns). */
export function deliveryDroppedCtx(c: ClientInfo, m: Message, reason: string, node: string): Row {
  return tail(
    {
      event: "delivery.dropped",
      reason,
      from_clientid: m.from,
      from_username: m.fromUsername ?? null,
      clientid: c.clientId,
      client_id: c.clientId,
      username: c.username ?? null,
      ...messageCols(m),
    },
    node,
  );
}

/** client.check_acl_complete: an ACL decision (4.4 columns). */
export function aclCompleteCtx(
  c: ClientInfo,
  action: string,
  topic: string,
  result: string,
  isCache: boolean,
  node: string,
): Row {
  return tail(
    {
      event: "client.check_acl_complete",
      clientid: c.clientId,
      client_id: c.clientId,
      username: c.username ?? null,
      peerhost: c.peerHost,
      topic,
      action,
      is_cache: isCache,
      result,
    },
    node,
  );
}

export function connectedCtx(c: ClientInfo, i: ConnectedInfo, node: string): Row {
  return tail(
    {
      event: "client.connected",
      ...clientCols(c),
      keepalive: i.keepalive,
      clean_start: i.cleanStart,
      receive_maximum: i.receiveMaximum,
      expiry_interval: i.expiryInterval,
      is_bridge: c.isBridge,
      conn_props: {},
      connected_at: i.connectedAt,
      auth_result: "success",
      connack: i.connack,
    },
    node,
  );
}

export function disconnectedCtx(c: ClientInfo, reason: string, node: string): Row {
  return tail(
    {
      event: "client.disconnected",
      reason,
      ...clientCols(c),
      disconn_props: {},
      disconnected_at: Date.now(),
      auth_result: "success",
      reason_code: reason,
    },
    node,
  );
}

const CONNACK_REASONS: Record<number, string> = {
  0: "success",
  1: "unacceptable_protocol_version",
  2: "client_identifier_not_valid",
  3: "server_unavailable",
  4: "malformed_username_or_password",
  5: "unauthorized_client",
  128: "unspecified_error",
  132: "unsupported_protocol_version",
  133: "client_identifier_not_valid",
  134: "bad_username_or_password",
  135: "not_authorized",
  136: "server_unavailable",
  137: "server_busy",
  138: "banned",
  140: "bad_authentication_method",
  149: "packet_too_large",
  151: "quota_exceeded",
};

export function connackCtx(c: ClientInfo, rc: number, node: string): Row {
  return tail(
    {
      event: "client.connack",
      reason_code: CONNACK_REASONS[rc] ?? String(rc),
      ...clientCols(c),
      conn_props: {},
    },
    node,
  );
}

export interface FilterEntry {
  topic: string;
  qos: number;
  sub_opts?: Row;
}

export function subscribeEntries(filters: readonly TopicFilterReq[]): FilterEntry[] {
  return filters.map((f) => ({
    topic: f.filter,
    qos: f.opts.qos,
    sub_opts: { qos: f.opts.qos, nl: f.opts.nl ? 1 : 0, rap: f.opts.rap ? 1 : 0, rh: f.opts.rh },
  }));
}

export function subscribeCtx(
  event: "client.subscribe" | "client.unsubscribe",
  c: ClientInfo,
  entries: FilterEntry[],
  node: string,
): Row {
  return tail(
    {
      event,
      ...clientCols(c),
      auth_result: "success",
      topic_filters: entries,
      topic: entries[0]?.topic ?? null,
      qos: entries[0]?.qos ?? 0,
    },
    node,
  );
}

export function sessionSubCtx(
  event: "session.subscribed" | "session.unsubscribed",
  c: ClientInfo,
  filter: string,
  o: SubOpts,
  node: string,
): Row {
  const ctx: Row = {
    event,
    clientid: c.clientId,
    client_id: c.clientId,
    username: c.username ?? null,
    peerhost: c.peerHost,
    topic: filter,
    qos: o.qos,
    nl: o.nl ? 1 : 0,
    rap: o.rap ? 1 : 0,
    rc: o.qos,
    rh: o.rh,
  };
  ctx[event === "session.subscribed" ? "sub_props" : "unsub_props"] = {};
  return tail(ctx, node);
}
