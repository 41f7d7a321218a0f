// Retained messages (MQTT 3.1.1 section 3.3.1.3; MQTT 5.0 sections 3.3.1.3, 3.8.3.1): stored and
// sent to new subscriptions with the RETAIN flag set [MQTT-3.3.1-5, MQTT-3.3.1-8], replaced by a
// newer retained message [MQTT-3.3.1-5], deleted by an empty payload [MQTT-3.3.1-10/11] (which
// still goes to current subscribers [MQTT-3.3.1-6]), RETAIN 0 on live deliveries in 3.1.1
// [MQTT-3.3.1-9], 5.0 Retain Handling 0/1/2 [MQTT-3.3.1-9..11] and Retain As Published
// [MQTT-3.3.1-12/13], mqtt.retain_available = false (5.0 Retain Available = 0, DISCONNECT 0x9A
// [MQTT-3.2.2-14]).

import type { IDisconnectPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { type Client, connect, type Proto, Raw, uid, useNode } from "./helpers.ts";

/** Subscribes to a marker topic, publishes to it and waits: every retained message is in by then. */
async function settle(c: Client): Promise<string[]> {
  const t = `settle/${uid()}`;
  await c.c.subscribeAsync(t, { qos: 1 });
  await c.c.publishAsync(t, "settled", { qos: 1 });
  const m = await c.inbox.waitFor((x) => x.topic === t);
  return c.inbox.all.slice(0, c.inbox.all.indexOf(m)).map((x) => x.payload);
}

describe.each([4, 5] as const)("retained messages, protocol %i", (v: Proto) => {
  const node = useNode();

  it("keeps a stored payload in memory of its own, not a view of the read that carried it", async () => {
    const topic = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "owned", { qos: 1, retain: true });
    const kept = node().retainer.lookup(topic);
    expect(kept?.payload.toString()).toBe("owned");
    // A view would hold the whole read buffer (a pool slab, or a burst of packets) for as long as
    // the message stays retained.
    expect(kept?.payload.buffer.byteLength).toBe(kept?.payload.length);
  });

  it("stores a retained message and sends it to a new subscription with RETAIN set", async () => {
    const topic = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "kept", { qos: 1, retain: true });
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const m = await sub.inbox.next();
    expect([m.payload, m.packet.retain, m.packet.qos]).toEqual(["kept", true, 1]);
  });

  it("sends retained messages at min(stored QoS, granted QoS)", async () => {
    const topic = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "q2", { qos: 2, retain: true });
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    expect((await sub.inbox.next()).packet.qos).toBe(1);
  });

  it("replaces a retained message with a newer one", async () => {
    const base = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`${base}/t`, "old", { qos: 1, retain: true });
    await pub.c.publishAsync(`${base}/t`, "new", { qos: 1, retain: true });
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1 });
    expect(await settle(sub)).toEqual(["new"]);
  });

  it("deletes a retained message with an empty payload, which current subscribers still get", async () => {
    const base = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`${base}/gone`, "x", { qos: 1, retain: true });
    await pub.c.publishAsync(`${base}/kept`, "k", { qos: 1, retain: true });
    const live = await connect(node(), v);
    await live.c.subscribeAsync(`${base}/gone`, { qos: 1 });
    await live.inbox.next();
    await pub.c.publishAsync(`${base}/gone`, "", { qos: 1, retain: true });
    const del = await live.inbox.next();
    expect([del.topic, del.payload]).toEqual([`${base}/gone`, ""]);
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1 });
    expect(await settle(sub)).toEqual(["k"]);
  });

  it("does not store a non-retained message", async () => {
    const base = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`${base}/a`, "plain", { qos: 1, retain: false });
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1 });
    expect(await settle(sub)).toEqual([]);
  });

  it("live deliveries to an existing subscription carry RETAIN 0 by default [MQTT-3.3.1-9]", async () => {
    const topic = `r/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "live", { qos: 1, retain: true });
    const m = await sub.inbox.next();
    expect([m.payload, m.packet.retain]).toEqual(["live", false]);
  });

  it("sends the retained message again when a subscription is repeated (Retain Handling 0)", async () => {
    const topic = `r/${uid()}`;
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "again", { qos: 1, retain: true });
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    await sub.c.subscribeAsync(topic, { qos: 1 });
    expect(await settle(sub)).toEqual(["again", "again"]);
  });
});

describe("5.0 subscription options for retained messages", () => {
  const node = useNode();

  it("Retain Handling 1 sends retained messages only for a new subscription", async () => {
    const topic = `rh/${uid()}`;
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "rh1", { qos: 1, retain: true });
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1, rh: 1 });
    await sub.c.subscribeAsync(topic, { qos: 1, rh: 1 });
    expect(await settle(sub)).toEqual(["rh1"]);
  });

  it("Retain Handling 2 never sends retained messages", async () => {
    const topic = `rh/${uid()}`;
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "rh2", { qos: 1, retain: true });
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1, rh: 2 });
    expect(await settle(sub)).toEqual([]);
    // The subscription itself works.
    await pub.c.publishAsync(topic, "live", { qos: 1 });
    expect((await sub.inbox.waitFor((m) => m.payload === "live")).topic).toBe(topic);
  });

  it("Retain As Published keeps RETAIN on live deliveries; without it RETAIN is 0", async () => {
    const topic = `rap/${uid()}`;
    const rap = await connect(node(), 5);
    await rap.c.subscribeAsync(topic, { qos: 1, rap: true });
    const plain = await connect(node(), 5);
    await plain.c.subscribeAsync(topic, { qos: 1, rap: false });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "r", { qos: 1, retain: true });
    await pub.c.publishAsync(topic, "n", { qos: 1, retain: false });
    const [r1, n1] = await rap.inbox.take(2);
    const [r2, n2] = await plain.inbox.take(2);
    expect([r1.packet.retain, n1.packet.retain]).toEqual([true, false]);
    expect([r2.packet.retain, n2.packet.retain]).toEqual([false, false]);
  });

  it("retained messages sent on subscribe keep RETAIN 1 with Retain As Published off", async () => {
    const topic = `rap/${uid()}`;
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "stored", { qos: 1, retain: true });
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1, rap: false });
    expect((await sub.inbox.next()).packet.retain).toBe(true);
  });
});

describe.each([4, 5] as const)("mqtt.retain_available = false, protocol %i", (v: Proto) => {
  const node = useNode({ "mqtt.retain_available": "false" });

  it("does not store retained messages (5.0: Retain Available 0 and DISCONNECT 0x9A)", async () => {
    const topic = `nr/${uid()}`;
    const { raw, connack } = await Raw.connect(node(), v);
    if (v === 5) expect(connack.properties?.retainAvailable).toBe(false);
    raw.send({ cmd: "publish", topic, payload: "r", qos: 1, messageId: 1, dup: false, retain: true });
    if (v === 5) expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x9a);
    else await raw.closed();
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    expect(await settle(sub)).toEqual([]);
    expect(node().retainer.lookup(topic)).toBeUndefined();
  });

  it("refuses a CONNECT whose will has Will Retain set [MQTT-3.2.2-13] (5.0 0x9A)", async () => {
    const { raw, connack } = await Raw.connect(node(), v, {
      will: { topic: `nr/${uid()}`, payload: Buffer.from("w"), qos: 0, retain: true },
    });
    const code = connack.reasonCode ?? connack.returnCode;
    if (v === 5) expect(code).toBe(0x9a);
    else expect(code).not.toBe(0);
    await raw.closed();
  });

  it("still delivers non-retained messages", async () => {
    const topic = `nr/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "plain", { qos: 1 });
    expect((await sub.inbox.next()).payload).toBe("plain");
  });
});
