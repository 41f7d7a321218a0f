// The rule test (emqx-facts 1.4) and the event catalogue (spec section 6, emqx-facts 1.3).
import { describe, expect, it } from "vitest";
import { EVENT_KEYS } from "../../src/rules/event-names.ts";
import { exampleContext, RULE_EVENTS, ruleEvent, ruleTest } from "../../src/rules/events.ts";
import { compileRule } from "../../src/rules/runtime/compile.ts";

const NOW = 1_700_000_000_000;

describe("ruleTest", () => {
  it("selects from the example publish when ctx is empty", () => {
    expect(ruleTest(`SELECT payload.msg AS msg, clientid, username, topic, qos FROM "t/#"`, {})).toEqual({
      ok: true,
      data: { msg: "hello", clientid: "c_emqx", username: "u_emqx", topic: "t/a", qos: 1 },
    });
  });

  it("lays ctx over the example values", () => {
    const r = ruleTest(`SELECT clientid, payload.x AS x, qos FROM "t/#"`, { clientid: "me", payload: '{"x": 42}' });
    expect(r).toEqual({ ok: true, data: { clientid: "me", x: 42, qos: 1 } });
  });

  it("the spec's example rule", () => {
    expect(ruleTest(`SELECT payload.msg as msg FROM "t/#" WHERE msg = 'hello'`, {})).toEqual({
      ok: true,
      data: { msg: "hello" },
    });
    expect(ruleTest(`SELECT payload.msg as msg FROM "t/#" WHERE msg = 'hello'`, { payload: '{"msg":"bye"}' })).toEqual({
      ok: false,
      code: 404,
      message: "SQL Not Match",
    });
  });

  it("a publish rule whose topics all miss ctx.topic does not match", () => {
    expect(ruleTest(`SELECT * FROM "x/#"`, {})).toEqual({ ok: false, code: 404, message: "SQL Not Match" });
    expect(ruleTest(`SELECT * FROM "x/#", "y/+"`, { topic: "z/1" })).toMatchObject({ ok: false, code: 404 });
    expect(ruleTest(`SELECT topic FROM "x/#", "y/+"`, { topic: "y/1" })).toEqual({ ok: true, data: { topic: "y/1" } });
  });

  it("a topic check does not apply when an event is among the sources", () => {
    expect(ruleTest(`SELECT clientid FROM "x/#", "$events/client_connected"`, {})).toEqual({
      ok: true,
      data: { clientid: "c_emqx" },
    });
  });

  it("events use their own example values", () => {
    const r = ruleTest(`SELECT * FROM "$events/client_connected"`, {}, { now: NOW, node: "n1@h" });
    expect(r.ok).toBe(true);
    const data = (r as { data: Record<string, unknown> }).data;
    expect(data).toMatchObject({
      event: "client.connected",
      clientid: "c_emqx",
      client_id: "c_emqx",
      connected_at: NOW,
      timestamp: NOW,
      node: "n1@h",
      mountpoint: null,
    });
    expect(ruleTest(`SELECT from_clientid, clientid FROM "$events/message_delivered"`, {})).toEqual({
      ok: true,
      data: { from_clientid: "c_emqx_1", clientid: "c_emqx_2" },
    });
  });

  it("3.x event names and client_id", () => {
    expect(ruleTest(`SELECT client_id, event FROM "message.publish" WHERE topic =~ 't/#'`, {})).toEqual({
      ok: true,
      data: { client_id: "c_emqx", event: "message.publish" },
    });
    expect(ruleTest(`SELECT client_id FROM "client.connected"`, { clientid: "new" })).toEqual({
      ok: true,
      data: { client_id: "new" },
    });
    expect(ruleTest(`SELECT clientid FROM "message.deliver"`, { client_id: "old" })).toEqual({
      ok: true,
      data: { clientid: "old" },
    });
    expect(ruleTest(`SELECT event FROM "$message"`, {})).toEqual({ ok: true, data: { event: "message.publish" } });
  });

  it("3.x client.subscribe with contains_topic", () => {
    expect(
      ruleTest(`SELECT topic, qos FROM "client.subscribe" WHERE contains_topic(topic_filters, 't/a')`, {}),
    ).toEqual({
      ok: true,
      data: { topic: "t/a", qos: 1 },
    });
    expect(
      ruleTest(`SELECT topic FROM "client.subscribe" WHERE contains_topic(topic_filters, 't/b')`, {}),
    ).toMatchObject({ ok: false, code: 404 });
  });

  it("FOREACH gives an array", () => {
    const r = ruleTest(`FOREACH payload.l AS x DO x * 2 AS d FROM "t/#"`, { payload: '{"l":[1,2]}' });
    expect(r).toEqual({ ok: true, data: [{ d: 2 }, { d: 4 }] });
    const none = ruleTest(`FOREACH payload.l AS x INCASE x > 5 FROM "t/#"`, { payload: '{"l":[1,2]}' });
    expect(none).toEqual({ ok: false, code: 404, message: "SQL Not Match" });
  });

  it("bad SQL is 400 Bad Arguments with the position", () => {
    expect(ruleTest(`SELECT a, b, c   WHERE x`, {})).toEqual({
      ok: false,
      code: 400,
      message: "Bad Arguments: line 1, column 18: expected FROM",
    });
    expect(ruleTest(`SELECT nope() FROM "t"`, {})).toEqual({
      ok: false,
      code: 400,
      message: "Bad Arguments: line 1, column 8: sql_function_not_supported: nope",
    });
  });

  it("an evaluation failure is 400 Bad Arguments", () => {
    expect(ruleTest(`SELECT payload.x FROM "t/#"`, { payload: "not json" })).toEqual({
      ok: false,
      code: 400,
      message: "Bad Arguments: decode_json_failed: 'not json'",
    });
    expect(ruleTest(`SELECT 1 + 'a' AS x FROM "t/#"`, {})).toMatchObject({
      ok: false,
      code: 400,
      message: "Bad Arguments: unsupported_type_implicit_conversion",
    });
  });

  it("missing values come out as null", () => {
    expect(ruleTest(`SELECT nothing, payload.none AS n FROM "t/#"`, {})).toEqual({
      ok: true,
      data: { nothing: null, n: null },
    });
  });

  it("ctx may give the payload as a map", () => {
    expect(ruleTest(`SELECT payload.a AS a FROM "t/#"`, { payload: { a: [1] } })).toEqual({
      ok: true,
      data: { a: [1] },
    });
  });
});

describe("event catalogue", () => {
  it("has every event, with its 4.x and 3.x FROM names", () => {
    expect(RULE_EVENTS.map((e) => e.key)).toEqual([...EVENT_KEYS]);
    const names = Object.fromEntries(RULE_EVENTS.map((e) => [e.key, [e.topic, e.legacyName]]));
    expect(names).toEqual({
      "message.publish": ["$events/message_publish", "message.publish"],
      "message.delivered": ["$events/message_delivered", "message.deliver"],
      "message.acked": ["$events/message_acked", "message.acked"],
      "message.dropped": ["$events/message_dropped", "message.dropped"],
      "delivery.dropped": ["$events/delivery_dropped", null],
      "client.connected": ["$events/client_connected", "client.connected"],
      "client.disconnected": ["$events/client_disconnected", "client.disconnected"],
      "client.connack": ["$events/client_connack", null],
      "client.check_acl_complete": ["$events/client_check_acl_complete", null],
      "client.subscribe": ["$events/client_subscribe", "client.subscribe"],
      "client.unsubscribe": ["$events/client_unsubscribe", "client.unsubscribe"],
      "session.subscribed": ["$events/session_subscribed", "session.subscribed"],
      "session.unsubscribed": ["$events/session_unsubscribed", "session.unsubscribed"],
    });
  });

  it.each(RULE_EVENTS.map((e) => [e.key, e] as const))("%s: common columns, both spellings", (_k, e) => {
    for (const c of ["event", "timestamp", "node", "clientid", "client_id", "username"]) expect(e.columns).toContain(c);
    expect(e.example.event).toBe(e.key);
    expect(e.title.en).not.toBe("");
    expect(e.title.zh).not.toBe("");
    expect(e.description.en).not.toBe("");
    for (const k of Object.keys(e.testColumns)) expect(e.columns).toContain(k);
  });

  it.each(RULE_EVENTS.map((e) => [e.key, e] as const))("%s: the example SQL compiles and tests OK", (key, e) => {
    const rule = compileRule(e.sqlExample);
    expect([...rule.sources.events, ...(rule.sources.topics.length > 0 ? ["message.publish"] : [])]).toContain(key);
    expect(ruleTest(e.sqlExample, {}).ok).toBe(true);
  });

  // spec section 6 table (3.x columns) and emqx-facts 1.3 (4.x columns)
  const required: [string, string[]][] = [
    [
      "message.publish",
      [
        "id",
        "topic",
        "payload",
        "peername",
        "qos",
        "timestamp",
        "peerhost",
        "flags",
        "headers",
        "pub_props",
        "publish_received_at",
        "retain",
      ],
    ],
    [
      "message.delivered",
      [
        "id",
        "topic",
        "payload",
        "peername",
        "qos",
        "auth_result",
        "mountpoint",
        "from_clientid",
        "from_username",
        "peerhost",
        "flags",
        "pub_props",
      ],
    ],
    ["message.acked", ["id", "topic", "payload", "peername", "qos", "from_clientid", "from_username", "puback_props"]],
    ["message.dropped", ["id", "topic", "payload", "peername", "qos", "node", "reason", "peerhost"]],
    ["delivery.dropped", ["reason", "from_clientid", "from_username", "id", "topic", "payload", "qos", "peerhost"]],
    [
      "client.connected",
      [
        "auth_result",
        "clean_start",
        "connack",
        "connected_at",
        "is_bridge",
        "keepalive",
        "mountpoint",
        "peername",
        "proto_ver",
        "sockname",
        "proto_name",
        "receive_maximum",
        "expiry_interval",
        "conn_props",
      ],
    ],
    [
      "client.disconnected",
      [
        "auth_result",
        "mountpoint",
        "peername",
        "reason_code",
        "reason",
        "sockname",
        "proto_name",
        "proto_ver",
        "disconn_props",
        "disconnected_at",
      ],
    ],
    [
      "client.connack",
      [
        "reason_code",
        "clean_start",
        "peername",
        "sockname",
        "proto_name",
        "proto_ver",
        "keepalive",
        "expiry_interval",
        "conn_props",
      ],
    ],
    ["client.check_acl_complete", ["peerhost", "topic", "action", "is_cache", "result"]],
    ["client.subscribe", ["auth_result", "mountpoint", "peername", "topic_filters", "topic", "qos"]],
    ["client.unsubscribe", ["auth_result", "mountpoint", "peername", "topic_filters", "topic", "qos"]],
    ["session.subscribed", ["peerhost", "topic", "qos", "sub_props", "nl", "rap", "rc", "rh"]],
    ["session.unsubscribed", ["peerhost", "topic", "qos", "unsub_props", "nl", "rap", "rc", "rh"]],
  ];
  it.each(required)("%s has its columns", (key, cols) => {
    const e = ruleEvent(key as (typeof EVENT_KEYS)[number]);
    for (const c of cols) expect(e.columns, c).toContain(c);
  });

  it("exampleContext fills the time columns and node, and copies", () => {
    const ctx = exampleContext("message.publish", NOW, "x@y");
    expect(ctx).toMatchObject({ timestamp: NOW, publish_received_at: NOW, node: "x@y", payload: '{"msg": "hello"}' });
    ctx.clientid = "changed";
    expect(ruleEvent("message.publish").example.clientid).toBe("c_emqx");
  });

  it("the catalogue is frozen data", () => {
    expect(Object.isFrozen(RULE_EVENTS[0])).toBe(true);
    expect(Object.isFrozen(RULE_EVENTS[0].example)).toBe(true);
  });
});
