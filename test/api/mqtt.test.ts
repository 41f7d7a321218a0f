// `POST /mqtt/publish|subscribe|unsubscribe` and the `_batch` forms (spec 000 §4, emqx-facts §3.4):
// messages published over HTTP reach real MQTT.js subscribers with the requested topic, payload,
// QoS, retain flag and 5.0 properties; subscriptions made over HTTP route real messages; bad
// input answers 107/108/115/116 and an offline client 112.

import { describe, expect, it } from "vitest";
import { connect, expectError, req, uid, useNode } from "./helpers.ts";

describe("HTTP publish, subscribe, unsubscribe", () => {
  const node = useNode();
  const post = (path: string, body: unknown) => req(node(), "POST", path, { body });

  it("POST /api/v3/mqtt/publish reaches a real subscriber (defaults: qos 0, not retained, from `http`)", async () => {
    const sub = await connect(node(), 5);
    const topic = `http/${uid()}`;
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const a = await post("/api/v3/mqtt/publish", { topic, payload: "hello" });
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ code: 0 });
    const m = await sub.inbox.next();
    expect([m.topic, m.payload, m.packet.qos, m.packet.retain]).toEqual([topic, "hello", 0, false]);
  });

  it("POST /api/v4/mqtt/publish with clientid, qos 1 and retain", async () => {
    const topic = `http4/${uid()}`;
    const a = await post("/api/v4/mqtt/publish", { topic, payload: "kept", qos: 1, retain: true, clientid: "api-v4" });
    expect(a.body).toEqual({ code: 0 });
    const late = await connect(node(), 4);
    await late.c.subscribeAsync(topic, { qos: 1 });
    const m = await late.inbox.next();
    expect([m.topic, m.payload, m.packet.qos, m.packet.retain]).toEqual([topic, "kept", 1, true]);
    await post("/api/v4/mqtt/publish", { topic, payload: "", retain: true });
  });

  it("the publisher id is the body's clientid / client_id, else `http`", async () => {
    const seen: string[] = [];
    node().broker.hooks.add(
      "message.publish",
      (m) => {
        if (m.topic.startsWith("from/")) seen.push(m.from);
        return m;
      },
      0,
      "api-test",
    );
    try {
      await post("/api/v3/mqtt/publish", { topic: "from/a", payload: "x", clientid: "c-one" });
      await post("/api/v3/mqtt/publish", { topic: "from/b", payload: "x", client_id: "c-two" });
      await post("/api/v3/mqtt/publish", { topic: "from/c", payload: "x" });
    } finally {
      node().broker.hooks.removeOwner("api-test");
    }
    expect(seen).toEqual(["c-one", "c-two", "http"]);
  });

  it("encoding base64, a JSON object payload, and the `topics` list (invalid names dropped)", async () => {
    const sub = await connect(node(), 4);
    const base = `enc/${uid()}`;
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1 });
    await post("/api/v3/mqtt/publish", {
      topic: `${base}/b64`,
      payload: Buffer.from("binary \u0000 ok").toString("base64"),
      encoding: "base64",
      qos: 1,
    });
    expect((await sub.inbox.next()).payload).toBe("binary \u0000 ok");
    await post("/api/v3/mqtt/publish", { topic: `${base}/json`, payload: { a: 1, b: [true] }, qos: 1 });
    expect(JSON.parse((await sub.inbox.next()).payload)).toEqual({ a: 1, b: [true] });
    const a = await post("/api/v3/mqtt/publish", { topics: `${base}/x,${base}/+,${base}/y`, payload: "many", qos: 1 });
    expect(a.body).toEqual({ code: 0 });
    const got = await sub.inbox.take(2);
    expect(got.map((m) => m.topic).sort()).toEqual([`${base}/x`, `${base}/y`]);
    const bad = await post("/api/v3/mqtt/publish", { topics: "a/+,#", payload: "none" });
    expectError(bad, 400, 115);
  });

  it("MQTT 5.0 properties reach a 5.0 subscriber", async () => {
    const sub = await connect(node(), 5);
    const topic = `props/${uid()}`;
    await sub.c.subscribeAsync(topic, { qos: 1 });
    await post("/api/v4/mqtt/publish", {
      topic,
      payload: "{}",
      qos: 1,
      properties: {
        payload_format_indicator: 1,
        message_expiry_interval: 60,
        response_topic: "reply/here",
        correlation_data: "corr-1",
        content_type: "application/json",
        user_properties: { a: "1" },
      },
      user_properties: { b: "2" },
    });
    const p = (await sub.inbox.next()).packet.properties ?? {};
    expect(p.payloadFormatIndicator).toBe(true);
    expect(p.messageExpiryInterval).toBeGreaterThan(0);
    expect(p.messageExpiryInterval).toBeLessThanOrEqual(60);
    expect(p.responseTopic).toBe("reply/here");
    expect(Buffer.from(p.correlationData as Buffer).toString()).toBe("corr-1");
    expect(p.contentType).toBe("application/json");
    expect(p.userProperties).toEqual({ a: "1", b: "2" });
  });

  it("publish errors: 107 no topic, 115 bad topic, 116 bad QoS, 108 wrong types and bad base64, 109 not JSON", async () => {
    expectError(await post("/api/v3/mqtt/publish", { payload: "x" }), 400, 107);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a/#", payload: "x" }), 400, 115);
    expectError(await post("/api/v3/mqtt/publish", { topic: "", payload: "x" }), 400, 115);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a", payload: "x", qos: 3 }), 400, 116);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a", payload: "x", qos: "1" }), 400, 108);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a", retain: "yes" }), 400, 108);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a", payload: "***", encoding: "base64" }), 400, 108);
    expectError(await post("/api/v3/mqtt/publish", { topic: "a", encoding: "hex" }), 400, 108);
    expectError(await post("/api/v3/mqtt/publish", [1, 2]), 400, 108);
    expectError(await req(node(), "POST", "/api/v3/mqtt/publish", { raw: "{not json" }), 400, 109);
    // A body sent without a JSON content type is still read as JSON (curl -d).
    const form = await req(node(), "POST", "/api/v3/mqtt/publish", {
      raw: JSON.stringify({ topic: "form/x", payload: "y" }),
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expect(form.body).toEqual({ code: 0 });
    const huge = await post("/api/v3/mqtt/publish", { topic: "big/x", payload: "x".repeat(5 * 1024 * 1024) });
    expectError(huge, 413, 108);
  });

  it("subscribe / unsubscribe act for a connected client; 112 when it is not online", async () => {
    const c = await connect(node(), 4);
    const topic = `onbehalf/${uid()}`;
    expect((await post("/api/v3/mqtt/subscribe", { topic, qos: 1, clientid: c.id })).body).toEqual({ code: 0 });
    expect(node().services.subscriptions.ofClient(c.id)).toEqual([expect.objectContaining({ topic, qos: 1 })]);
    await post("/api/v3/mqtt/publish", { topic, payload: "routed", qos: 1 });
    expect((await c.inbox.next()).payload).toBe("routed");
    expect((await post("/api/v3/mqtt/unsubscribe", { topic, clientid: c.id })).body).toEqual({ code: 0 });
    expect(node().services.subscriptions.ofClient(c.id)).toEqual([]);
    // `topics` subscribes to each; client_id is accepted too.
    expect((await post("/api/v4/mqtt/subscribe", { topics: `${topic}/a,${topic}/b`, client_id: c.id })).body).toEqual({
      code: 0,
    });
    expect(
      node()
        .services.subscriptions.ofClient(c.id)
        .map((s) => s.topic)
        .sort(),
    ).toEqual([`${topic}/a`, `${topic}/b`]);
    expectError(await post("/api/v3/mqtt/subscribe", { topic, clientid: "not-online-x" }), 404, 112);
    expectError(await post("/api/v3/mqtt/unsubscribe", { topic, clientid: "not-online-x" }), 404, 112);
    expectError(await post("/api/v3/mqtt/subscribe", { topic }), 400, 107);
    expectError(await post("/api/v3/mqtt/subscribe", { clientid: c.id }), 400, 107);
    expectError(await post("/api/v3/mqtt/subscribe", { topic: "a/#/b", clientid: c.id }), 400, 115);
    expectError(await post("/api/v3/mqtt/subscribe", { topic, qos: 5, clientid: c.id }), 400, 116);
  });

  it("publish_batch answers [{topic, code}] per item", async () => {
    const sub = await connect(node(), 4);
    const topic = `batch/${uid()}`;
    await sub.c.subscribeAsync(`${topic}/#`, { qos: 1 });
    const a = await post("/api/v3/mqtt/publish_batch", [
      { topic: `${topic}/1`, payload: "one", qos: 1 },
      { topic: `${topic}/+`, payload: "bad" },
      { topic: `${topic}/2`, payload: "two", qos: 7 },
      { topic: `${topic}/3`, payload: "three", qos: 1 },
    ]);
    expect(a.body).toEqual({
      code: 0,
      data: [
        { topic: `${topic}/1`, code: 0 },
        { topic: `${topic}/+`, code: 115 },
        { topic: `${topic}/2`, code: 116 },
        { topic: `${topic}/3`, code: 0 },
      ],
    });
    expect((await sub.inbox.take(2)).map((m) => m.payload)).toEqual(["one", "three"]);
    expectError(await post("/api/v3/mqtt/publish_batch", { topic: "not/an/array" }), 400, 108);
  });

  it("subscribe_batch and unsubscribe_batch answer [{clientid, topic, code}]", async () => {
    const c = await connect(node(), 4);
    const t = `sb/${uid()}`;
    const a = await post("/api/v3/mqtt/subscribe_batch", [
      { clientid: c.id, topic: `${t}/a`, qos: 1 },
      { clientid: "offline-batch", topic: `${t}/b` },
      { clientid: c.id, topic: `${t}/#/x` },
    ]);
    expect(a.body).toEqual({
      code: 0,
      data: [
        { clientid: c.id, topic: `${t}/a`, code: 0 },
        { clientid: "offline-batch", topic: `${t}/b`, code: 112 },
        { clientid: c.id, topic: `${t}/#/x`, code: 115 },
      ],
    });
    const u = await post("/api/v3/mqtt/unsubscribe_batch", [
      { clientid: c.id, topic: `${t}/a` },
      { clientid: "offline-batch", topic: `${t}/b` },
    ]);
    expect(u.body).toEqual({
      code: 0,
      data: [
        { clientid: c.id, topic: `${t}/a`, code: 0 },
        { clientid: "offline-batch", topic: `${t}/b`, code: 112 },
      ],
    });
    expect(node().services.subscriptions.ofClient(c.id)).toEqual([]);
  });
});
