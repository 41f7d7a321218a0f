// The rule-engine event catalogue, as data (spec section 6 "Rule-engine trigger events",
// emqx-facts 1.3), and the rule test (emqx-facts 1.4).
//
// Every event lists its columns with both dialects' spellings (4.x `clientid`, 3.x
// `client_id`; 3.x-only columns such as `peername`, `auth_result`, `retain`; 4.x-only ones
// such as `peerhost`, `flags`, `pub_props`), plus `event`, `timestamp` and `node`. The example
// record holds a value for every column (time columns are filled with the current time by
// exampleContext); `testColumns` are the few the Dashboard offers for editing. The event
// builders that fill these columns from broker hooks live with the engine, not here.
//
// client.subscribe / client.unsubscribe exist in 3.x only; svc also accepts them as
// `$events/client_subscribe` / `$events/client_unsubscribe`.

import { matchTopic } from "../mqtt/topic.ts";
import { EVENT_KEYS, EVENT_TOPICS, type EventKey, eventsOfSource, LEGACY_EVENT_NAMES } from "./event-names.ts";
import { type CompiledRule, compileRule } from "./runtime/compile.ts";
import { RuleEvalError } from "./runtime/errors.ts";
import { isMap, type Row, setOwn, textOf } from "./runtime/values.ts";
import { SqlError } from "./sql/errors.ts";

export interface I18nText {
  readonly en: string;
  readonly zh: string;
}

export interface RuleEventInfo {
  /** The event key (hook name): `client.connected`. */
  readonly key: EventKey;
  /** The 4.x FROM name: `$events/client_connected` (message.publish: any topic filter). */
  readonly topic: string;
  /** The 3.x FROM name (`client.connected`, `message.deliver`), null for 4.x-only events. */
  readonly legacyName: string | null;
  readonly title: I18nText;
  readonly description: I18nText;
  /** Every column, both spellings, including event, timestamp and node. */
  readonly columns: readonly string[];
  /** Example values of the columns the rule test usually edits. */
  readonly testColumns: Readonly<Row>;
  /** An example value for every column (time columns 0: see exampleContext). */
  readonly example: Readonly<Row>;
  readonly sqlExample: string;
}

export const DEFAULT_NODE = "svc@127.0.0.1";

/** Columns holding "now" in milliseconds in an example. */
const TIME_COLUMNS = ["timestamp", "publish_received_at", "connected_at", "disconnected_at"] as const;

const PAYLOAD = '{"msg": "hello"}';
const MSG_ID = "0005F8F8A7B5E8D2F4420100000E0001";
const USER_PROPS = { "User-Property": { foo: "bar" }, "User-Property-Pairs": [{ key: "foo", value: "bar" }] };
const PUB_PROPS = { "Payload-Format-Indicator": 0, "Message-Expiry-Interval": 30, ...USER_PROPS };
const CONN_PROPS = { "Session-Expiry-Interval": 7200, "Receive-Maximum": 32, ...USER_PROPS };
const DISCONN_PROPS = { "Session-Expiry-Interval": 7200, "Reason-String": "Redirect to another server", ...USER_PROPS };
const PEERHOST = "192.168.0.10";
const PEERNAME = "192.168.0.10:56431";
const SOCKNAME = "0.0.0.0:1883";

/** The message columns shared by message events (4.x `M` plus the 3.x spellings). */
function message(): Row {
  return {
    id: MSG_ID,
    payload: PAYLOAD,
    peerhost: PEERHOST,
    peername: PEERNAME,
    topic: "t/a",
    qos: 1,
    flags: { retain: false, dup: false },
    retain: 0,
    headers: { peerhost: PEERHOST, proto_ver: 5, protocol: "mqtt", username: "u_emqx" },
    pub_props: PUB_PROPS,
    publish_received_at: 0,
  };
}

function client(clientid: string, username: string): Row {
  return { clientid, client_id: clientid, username };
}

function tail(): Row {
  return { timestamp: 0, node: DEFAULT_NODE };
}

const PUBLISH_TEST = { clientid: "c_emqx", username: "u_emqx", topic: "t/a", qos: 1, payload: PAYLOAD };
const DELIVERED_TEST = {
  from_clientid: "c_emqx_1",
  from_username: "u_emqx_1",
  clientid: "c_emqx_2",
  username: "u_emqx_2",
  topic: "t/a",
  qos: 1,
  payload: PAYLOAD,
};
const SUB_TEST = { clientid: "c_emqx", username: "u_emqx", topic: "t/a", qos: 1 };
const TOPIC_FILTERS = [{ topic: "t/a", qos: 1, sub_opts: { qos: 1, nl: 0, rap: 0, rh: 0 } }];

interface Def {
  readonly title: I18nText;
  readonly description: I18nText;
  readonly sqlExample: string;
  readonly testColumns: Row;
  readonly example: Row;
}

const DEFS: Readonly<Record<EventKey, Def>> = {
  "message.publish": {
    title: { en: "message publish", zh: "消息发布" },
    description: { en: "message publish", zh: "消息发布" },
    sqlExample: `SELECT payload.msg as msg FROM "t/#" WHERE msg = 'hello'`,
    testColumns: PUBLISH_TEST,
    example: { event: "message.publish", ...client("c_emqx", "u_emqx"), ...message(), ...tail() },
  },
  "message.delivered": {
    title: { en: "message delivered", zh: "消息已投递" },
    description: { en: "message delivered", zh: "消息已投递" },
    sqlExample: `SELECT * FROM "$events/message_delivered" WHERE topic =~ 't/#'`,
    testColumns: DELIVERED_TEST,
    example: {
      event: "message.delivered",
      from_clientid: "c_emqx_1",
      from_username: "u_emqx_1",
      ...client("c_emqx_2", "u_emqx_2"),
      ...message(),
      auth_result: "success",
      mountpoint: null,
      ...tail(),
    },
  },
  "message.acked": {
    title: { en: "message acked", zh: "消息应答" },
    description: { en: "message acked", zh: "消息应答" },
    sqlExample: `SELECT * FROM "$events/message_acked" WHERE topic =~ 't/#'`,
    testColumns: DELIVERED_TEST,
    example: {
      event: "message.acked",
      from_clientid: "c_emqx_1",
      from_username: "u_emqx_1",
      ...client("c_emqx_2", "u_emqx_2"),
      ...message(),
      puback_props: { "Reason-String": "OK", ...USER_PROPS },
      ...tail(),
    },
  },
  "message.dropped": {
    title: { en: "message routing-drop", zh: "消息转发丢弃" },
    description: {
      en: "messages are discarded during forwarding, usually because there are no subscribers",
      zh: "消息在转发的过程中被丢弃，一般是由于没有订阅者",
    },
    sqlExample: `SELECT * FROM "$events/message_dropped" WHERE topic =~ 't/#'`,
    testColumns: { reason: "no_subscribers", ...PUBLISH_TEST },
    example: {
      event: "message.dropped",
      reason: "no_subscribers",
      ...client("c_emqx", "u_emqx"),
      ...message(),
      ...tail(),
    },
  },
  "delivery.dropped": {
    title: { en: "message delivery-drop", zh: "消息投递丢弃" },
    description: {
      en: "messages are discarded during delivery, i.e. because the message queue is full",
      zh: "消息在投递的过程中被丢弃，比如由于消息队列已满",
    },
    sqlExample: `SELECT * FROM "$events/delivery_dropped" WHERE topic =~ 't/#'`,
    testColumns: { reason: "queue_full", ...DELIVERED_TEST },
    example: {
      event: "delivery.dropped",
      reason: "queue_full",
      from_clientid: "c_emqx_1",
      from_username: "u_emqx_1",
      ...client("c_emqx_2", "u_emqx_2"),
      ...message(),
      ...tail(),
    },
  },
  "client.connected": {
    title: { en: "client connected", zh: "连接建立" },
    description: { en: "client connected", zh: "连接建立" },
    sqlExample: `SELECT * FROM "$events/client_connected"`,
    testColumns: { clientid: "c_emqx", username: "u_emqx", peername: "127.0.0.1:52918" },
    example: {
      event: "client.connected",
      ...client("c_emqx", "u_emqx"),
      mountpoint: null,
      peername: PEERNAME,
      sockname: SOCKNAME,
      proto_name: "MQTT",
      proto_ver: 5,
      keepalive: 60,
      clean_start: true,
      receive_maximum: 32,
      expiry_interval: 3600,
      is_bridge: false,
      conn_props: CONN_PROPS,
      connected_at: 0,
      auth_result: "success",
      connack: 0,
      ...tail(),
    },
  },
  "client.disconnected": {
    title: { en: "client disconnected", zh: "连接断开" },
    description: { en: "client disconnected", zh: "连接断开" },
    sqlExample: `SELECT * FROM "$events/client_disconnected" WHERE reason = 'normal'`,
    testColumns: { clientid: "c_emqx", username: "u_emqx", reason: "normal" },
    example: {
      event: "client.disconnected",
      reason: "normal",
      ...client("c_emqx", "u_emqx"),
      peername: PEERNAME,
      sockname: SOCKNAME,
      proto_name: "MQTT",
      proto_ver: 5,
      disconn_props: DISCONN_PROPS,
      disconnected_at: 0,
      auth_result: "success",
      mountpoint: null,
      reason_code: "normal",
      ...tail(),
    },
  },
  "client.connack": {
    title: { en: "client connack", zh: "连接确认" },
    description: { en: "client connack", zh: "连接确认" },
    sqlExample: `SELECT * FROM "$events/client_connack"`,
    testColumns: { clientid: "c_emqx", username: "u_emqx", reason_code: "success" },
    example: {
      event: "client.connack",
      reason_code: "success",
      ...client("c_emqx", "u_emqx"),
      clean_start: true,
      peername: PEERNAME,
      sockname: SOCKNAME,
      proto_name: "MQTT",
      proto_ver: 5,
      keepalive: 60,
      expiry_interval: 3600,
      conn_props: CONN_PROPS,
      ...tail(),
    },
  },
  "client.check_acl_complete": {
    title: { en: "client check acl complete", zh: "鉴权结果" },
    description: { en: "client check acl complete", zh: "鉴权结果" },
    sqlExample: `SELECT * FROM "$events/client_check_acl_complete"`,
    testColumns: { clientid: "c_emqx", username: "u_emqx", topic: "t/1", action: "publish", result: "allow" },
    example: {
      event: "client.check_acl_complete",
      ...client("c_emqx", "u_emqx"),
      peerhost: PEERHOST,
      topic: "t/a",
      action: "publish",
      is_cache: false,
      result: "allow",
      ...tail(),
    },
  },
  "client.subscribe": {
    title: { en: "client subscribe", zh: "客户端订阅" },
    description: {
      en: "a client asks to subscribe (before the subscriptions are made)",
      zh: "客户端请求订阅（订阅生效之前）",
    },
    sqlExample: `SELECT clientid, topic_filters FROM "client.subscribe" WHERE contains_topic_match(topic_filters, 't/#')`,
    testColumns: { ...SUB_TEST, topic_filters: TOPIC_FILTERS },
    example: {
      event: "client.subscribe",
      ...client("c_emqx", "u_emqx"),
      auth_result: "success",
      mountpoint: null,
      peerhost: PEERHOST,
      peername: PEERNAME,
      topic_filters: TOPIC_FILTERS,
      topic: "t/a",
      qos: 1,
      ...tail(),
    },
  },
  "client.unsubscribe": {
    title: { en: "client unsubscribe", zh: "客户端取消订阅" },
    description: {
      en: "a client asks to unsubscribe (before the subscriptions are removed)",
      zh: "客户端请求取消订阅（取消生效之前）",
    },
    sqlExample: `SELECT clientid, topic_filters FROM "client.unsubscribe" WHERE contains_topic(topic_filters, 't/a')`,
    testColumns: { ...SUB_TEST, topic_filters: [{ topic: "t/a", qos: 0 }] },
    example: {
      event: "client.unsubscribe",
      ...client("c_emqx", "u_emqx"),
      auth_result: "success",
      mountpoint: null,
      peerhost: PEERHOST,
      peername: PEERNAME,
      topic_filters: [{ topic: "t/a", qos: 0 }],
      topic: "t/a",
      qos: 0,
      ...tail(),
    },
  },
  "session.subscribed": {
    title: { en: "session subscribed", zh: "会话订阅完成" },
    description: { en: "session subscribed", zh: "会话订阅完成" },
    sqlExample: `SELECT * FROM "$events/session_subscribed" WHERE topic =~ 't/#'`,
    testColumns: SUB_TEST,
    example: {
      event: "session.subscribed",
      ...client("c_emqx", "u_emqx"),
      peerhost: PEERHOST,
      topic: "t/a",
      qos: 1,
      sub_props: USER_PROPS,
      nl: 0,
      rap: 0,
      rc: 1,
      rh: 0,
      ...tail(),
    },
  },
  "session.unsubscribed": {
    title: { en: "session unsubscribed", zh: "会话取消订阅完成" },
    description: { en: "session unsubscribed", zh: "会话取消订阅完成" },
    sqlExample: `SELECT * FROM "$events/session_unsubscribed" WHERE topic =~ 't/#'`,
    testColumns: SUB_TEST,
    example: {
      event: "session.unsubscribed",
      ...client("c_emqx", "u_emqx"),
      peerhost: PEERHOST,
      topic: "t/a",
      qos: 1,
      unsub_props: USER_PROPS,
      nl: 0,
      rap: 0,
      rc: 1,
      rh: 0,
      ...tail(),
    },
  },
};

const legacyOf = new Map<EventKey, string>();
for (const [name, key] of Object.entries(LEGACY_EVENT_NAMES)) if (!legacyOf.has(key)) legacyOf.set(key, name);
legacyOf.set("message.delivered", "message.deliver");

/** The catalogue, in the order of GET /rule_events. */
export const RULE_EVENTS: readonly RuleEventInfo[] = EVENT_KEYS.map((key) => {
  const d = DEFS[key];
  return Object.freeze({
    key,
    topic: EVENT_TOPICS[key],
    legacyName: legacyOf.get(key) ?? null,
    title: d.title,
    description: d.description,
    columns: Object.freeze(Object.keys(d.example)),
    testColumns: Object.freeze(d.testColumns),
    example: Object.freeze(d.example),
    sqlExample: d.sqlExample,
  });
});

const byKey = new Map<EventKey, RuleEventInfo>(RULE_EVENTS.map((e) => [e.key, e]));

/** The catalogue entry of an event. */
export function ruleEvent(key: EventKey): RuleEventInfo {
  return byKey.get(key)!;
}

/** A full example event: the example record with the time columns at `now` and `node`. */
export function exampleContext(key: EventKey, now: number = Date.now(), node: string = DEFAULT_NODE): Row {
  const ctx: Row = { ...ruleEvent(key).example };
  for (const c of TIME_COLUMNS) if (Object.hasOwn(ctx, c)) ctx[c] = now;
  ctx.node = node;
  return ctx;
}

/** Column pairs spelled differently by the dialects: a ctx value for one also sets the other. */
const SPELLINGS: readonly (readonly [string, string])[] = [["clientid", "client_id"]];

export type RuleTestResult =
  | { readonly ok: true; readonly data: Row | Row[] }
  | { readonly ok: false; readonly code: 400 | 404; readonly message: string };

export interface RuleTestOptions {
  /** "Now" for the example's time columns (default Date.now()). */
  readonly now?: number;
  readonly node?: string;
}

const NOT_MATCH: RuleTestResult = Object.freeze({ ok: false, code: 404, message: "SQL Not Match" });

function jsonReady(v: unknown): unknown {
  if (v === undefined) return null;
  if (Array.isArray(v)) return v.map(jsonReady);
  if (isMap(v)) {
    const out: Row = {};
    for (const k of Object.keys(v)) setOwn(out, k, jsonReady(v[k]));
    return out;
  }
  return v;
}

/** The event a rule test simulates: the first FROM source's (a topic: message.publish). */
export function testEventOf(rule: CompiledRule): EventKey {
  const first = rule.sources.raw[0];
  const keys = first === undefined ? null : eventsOfSource(first);
  return keys === null || keys.length === 0 ? "message.publish" : keys[0];
}

/**
 * The rule test (`POST /rules?test=true` with `{rawsql, ctx}`, emqx-facts 1.4): compiles the SQL,
 * lays ctx over the example values of the first FROM source's event and evaluates. Returns the
 * selected fields (FOREACH: one map per item), or "SQL Not Match" (404) when WHERE/INCASE
 * rejects, FOREACH leaves nothing, or every FROM source is a topic filter and ctx's topic
 * matches none; "Bad Arguments: ..." (400) when the SQL does not compile or evaluation fails.
 * Missing values come out as null.
 */
export function ruleTest(sql: string, ctx: Readonly<Row> = {}, opts: RuleTestOptions = {}): RuleTestResult {
  let rule: CompiledRule;
  try {
    rule = compileRule(sql);
  } catch (e) {
    if (e instanceof SqlError) return { ok: false, code: 400, message: `Bad Arguments: ${e.message}` };
    throw e;
  }
  const full = exampleContext(testEventOf(rule), opts.now ?? Date.now(), opts.node ?? DEFAULT_NODE);
  for (const k of Object.keys(ctx)) setOwn(full, k, ctx[k]);
  for (const [a, b] of SPELLINGS) {
    if (Object.hasOwn(ctx, a) && !Object.hasOwn(ctx, b)) full[b] = ctx[a];
    else if (Object.hasOwn(ctx, b) && !Object.hasOwn(ctx, a)) full[a] = ctx[b];
  }
  const { topics, events } = rule.sources;
  if (events.length === 0) {
    const topic = textOf(full.topic);
    if (topic === null || !topics.some((f) => matchTopic(f, topic))) return NOT_MATCH;
  }
  let rows: Row[] | null;
  try {
    rows = rule.evaluate(full);
  } catch (e) {
    if (e instanceof RuleEvalError) return { ok: false, code: 400, message: `Bad Arguments: ${e.reason}` };
    throw e;
  }
  if (rows === null) return NOT_MATCH;
  const data = rule.isForeach ? (rows.map(jsonReady) as Row[]) : (jsonReady(rows[0]) as Row);
  return { ok: true, data };
}
