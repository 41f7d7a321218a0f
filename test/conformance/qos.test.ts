// Quality of Service conformance (MQTT 3.1.1 sections 3.3-3.7, 4.3, 4.4; MQTT 5.0 sections 3.3-3.7,
// 4.3, 4.4, 4.9): QoS 0/1/2 flows in both directions and the delivered QoS = min(published,
// granted) [MQTT-3.8.4-8], the outgoing inflight window (max_inflight) and the client's 5.0
// Receive Maximum [MQTT-4.9.0-2], retransmission after retry_interval for 3.1.1 with DUP
// [MQTT-3.3.1-1] and none for 5.0 before reconnect [MQTT-4.4.0-1], QoS 2 exactly once: a duplicate
// PUBLISH before PUBREL is not delivered again [MQTT-4.3.3-10] (until await_rel_timeout forgets
// the id), max_awaiting_rel (5.0 0x93
// [MQTT-3.3.4-9]), upgrade_qos, mqtt.max_qos_allowed (SUBACK capped [MQTT-3.9.3-2], 5.0 Maximum
// QoS in CONNACK and DISCONNECT 0x9B [MQTT-3.2.2-11]).

import type { IConnackPacket, IDisconnectPacket, IPublishPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { barrier, connect, type Proto, Raw, uid, useNode, waitUntil } from "./helpers.ts";

const levels = [0, 1, 2] as const;

/** A QoS 2 PUBLISH with packet id `messageId`, as a raw client sends it. */
function qos2Publish(topic: string, payload: string, messageId: number): IPublishPacket {
  return { cmd: "publish", topic, payload, qos: 2, messageId, dup: false, retain: false };
}

describe.each([4, 5] as const)("QoS flows, protocol %i", (v: Proto) => {
  const node = useNode({
    "zone.external.max_inflight": "2",
    "zone.external.retry_interval": "1s",
    "zone.external.await_rel_timeout": "1s",
  });

  it.each(levels.flatMap((p) => levels.map((s) => [p, s] as const)))(
    "publish QoS %i to a QoS %i subscription arrives at the lower QoS",
    async (pq, sq) => {
      const topic = `q/${uid()}`;
      const sub = await connect(node(), v);
      const granted = await sub.c.subscribeAsync(topic, { qos: sq });
      expect(granted[0].qos).toBe(sq);
      const pub = await connect(node(), v);
      await pub.c.publishAsync(topic, "m", { qos: pq });
      const m = await sub.inbox.next();
      expect([m.payload, m.packet.qos]).toEqual(["m", Math.min(pq, sq)]);
    },
  );

  it("acknowledges inbound QoS 1 with PUBACK and QoS 2 with PUBREC/PUBCOMP", async () => {
    const { raw } = await Raw.connect(node(), v);
    raw.send({ cmd: "publish", topic: `ack/${uid()}`, payload: "1", qos: 1, messageId: 11, dup: false, retain: false });
    expect((await raw.next("puback")).messageId).toBe(11);
    raw.send({ cmd: "publish", topic: `ack/${uid()}`, payload: "2", qos: 2, messageId: 12, dup: false, retain: false });
    expect((await raw.next("pubrec")).messageId).toBe(12);
    raw.send({ cmd: "pubrel", messageId: 12 });
    expect((await raw.next("pubcomp")).messageId).toBe(12);
  });

  it("completes an outbound QoS 2 flow: PUBLISH, PUBREC, PUBREL, PUBCOMP", async () => {
    const topic = `q2/${uid()}`;
    const { raw } = await Raw.connect(node(), v);
    await raw.subscribe(topic, 2);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "x", { qos: 2 });
    const p = await raw.nextPublish();
    expect([p.qos, p.payload.toString()]).toEqual([2, "x"]);
    raw.send({ cmd: "pubrec", messageId: p.messageId });
    expect((await raw.next("pubrel")).messageId).toBe(p.messageId);
    raw.send({ cmd: "pubcomp", messageId: p.messageId });
    expect(await raw.barrier()).toEqual([]);
  });

  it("holds a third QoS 1 message until the window of max_inflight = 2 has room", async () => {
    const topic = `win/${uid()}`;
    const { raw } = await Raw.connect(node(), v);
    await raw.subscribe(topic, 1);
    const pub = await connect(node(), v);
    for (const p of ["a", "b", "c"]) await pub.c.publishAsync(topic, p, { qos: 1 });
    const first = await raw.nextPublish();
    const second = await raw.nextPublish();
    expect([first.payload.toString(), second.payload.toString()]).toEqual(["a", "b"]);
    expect(await raw.barrier()).toEqual([]);
    raw.send({ cmd: "puback", messageId: first.messageId });
    const third = await raw.nextPublish();
    expect(third.payload.toString()).toBe("c");
    expect(third.messageId).not.toBe(second.messageId);
  });

  it("gives every inflight message its own non-zero packet id [MQTT-2.2.1-2]", async () => {
    const topic = `pid/${uid()}`;
    const { raw } = await Raw.connect(node(), v);
    await raw.subscribe(topic, 2);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "a", { qos: 1 });
    await pub.c.publishAsync(topic, "b", { qos: 2 });
    const a = await raw.nextPublish();
    const b = await raw.nextPublish();
    expect(a.messageId).toBeGreaterThan(0);
    expect(b.messageId).toBeGreaterThan(0);
    expect(a.messageId).not.toBe(b.messageId);
  });

  it("delivers a QoS 2 message once when the PUBLISH is repeated before PUBREL [MQTT-4.3.3-10]", async () => {
    const topic = `once/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const { raw } = await Raw.connect(node(), v);
    const publish = qos2Publish(topic, "once", 7);
    raw.send(publish);
    expect((await raw.next("pubrec")).messageId).toBe(7);
    raw.send({ ...publish, dup: true });
    expect((await raw.next("pubrec")).messageId).toBe(7);
    raw.send({ cmd: "pubrel", messageId: 7 });
    expect((await raw.next("pubcomp")).messageId).toBe(7);
    raw.send({ cmd: "publish", topic, payload: "marker", qos: 0, dup: false, retain: false });
    await sub.inbox.waitFor((m) => m.payload === "marker");
    expect(sub.inbox.payloads()).toEqual(["once", "marker"]);
    // After PUBCOMP the packet id is free: the same id carries a new message.
    raw.send({ ...publish, payload: "again" });
    await raw.next("pubrec");
    expect((await sub.inbox.waitFor((m) => m.payload === "again")).packet.qos).toBe(2);
  });

  it("forgets an incoming QoS 2 id whose PUBREL did not come within await_rel_timeout", async () => {
    const topic = `rel/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const { raw } = await Raw.connect(node(), v);
    const publish = qos2Publish(topic, "a", 9);
    const expired = () => node().broker.metrics.get("messages.qos2.expired");
    const before = expired();
    raw.send(publish);
    expect((await raw.next("pubrec")).messageId).toBe(9);
    expect((await sub.inbox.next()).payload).toBe("a");
    const t0 = Date.now();
    await waitUntil(() => expired() > before, "the id awaiting PUBREL is forgotten");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(500);
    // The id is free again: the same PUBLISH is a new message now, delivered again.
    raw.send({ ...publish, dup: true });
    expect((await raw.next("pubrec")).messageId).toBe(9);
    raw.send({ cmd: "pubrel", messageId: 9 });
    expect((await raw.next("pubcomp")).messageId).toBe(9);
    expect((await sub.inbox.next()).payload).toBe("a");
    expect(sub.inbox.payloads()).toEqual(["a", "a"]);
  });

  it.runIf(v === 4)("3.1.1: resends an unacknowledged PUBLISH after retry_interval with DUP set", async () => {
    const topic = `retry/${uid()}`;
    const { raw } = await Raw.connect(node(), 4);
    await raw.subscribe(topic, 1);
    const pub = await connect(node(), 4);
    await pub.c.publishAsync(topic, "r", { qos: 1 });
    const p1 = await raw.nextPublish();
    expect(p1.dup).toBe(false);
    const t0 = Date.now();
    const p2 = await raw.nextPublish(4000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    expect([p2.dup, p2.messageId, p2.payload.toString()]).toEqual([true, p1.messageId, "r"]);
    raw.send({ cmd: "puback", messageId: p2.messageId });
  });

  it.runIf(v === 4)("3.1.1: resends PUBREL after retry_interval when PUBCOMP does not come", async () => {
    const topic = `retry2/${uid()}`;
    const { raw } = await Raw.connect(node(), 4);
    await raw.subscribe(topic, 2);
    const pub = await connect(node(), 4);
    await pub.c.publishAsync(topic, "r", { qos: 2 });
    const p = await raw.nextPublish();
    raw.send({ cmd: "pubrec", messageId: p.messageId });
    expect((await raw.next("pubrel")).messageId).toBe(p.messageId);
    expect((await raw.next("pubrel", 4000)).messageId).toBe(p.messageId);
    raw.send({ cmd: "pubcomp", messageId: p.messageId });
  });

  it.runIf(v === 5)("5.0: does not resend on the same connection [MQTT-4.4.0-1]", async () => {
    // A 3.1.1 subscriber of the same message is the clock: once it got the resend, the 5.0 one
    // would have got it too.
    const topic = `noretry/${uid()}`;
    const r5 = (await Raw.connect(node(), 5)).raw;
    await r5.subscribe(topic, 1);
    const r4 = (await Raw.connect(node(), 4)).raw;
    await r4.subscribe(topic, 1);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "r", { qos: 1 });
    await r5.nextPublish();
    await r4.nextPublish();
    expect((await r4.nextPublish(4000)).dup).toBe(true);
    expect(await r5.barrier()).toEqual([]);
  });

  it.runIf(v === 5)("5.0: the client's Receive Maximum lowers the window", async () => {
    const topic = `rm/${uid()}`;
    const { raw } = await Raw.connect(node(), 5, { properties: { receiveMaximum: 1 } });
    await raw.subscribe(topic, 1);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "a", { qos: 1 });
    await pub.c.publishAsync(topic, "b", { qos: 1 });
    const a = await raw.nextPublish();
    expect(a.payload.toString()).toBe("a");
    expect(await raw.barrier()).toEqual([]);
    raw.send({ cmd: "puback", messageId: a.messageId });
    expect((await raw.nextPublish()).payload.toString()).toBe("b");
  });
});

describe.each([4, 5] as const)("QoS limits, protocol %i", (v: Proto) => {
  const node = useNode({ "zone.external.max_awaiting_rel": "2", "zone.external.upgrade_qos": "on" });

  it("upgrade_qos delivers at the subscription's QoS", async () => {
    const topic = `up/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "m", { qos: 0 });
    expect((await sub.inbox.next()).packet.qos).toBe(2);
  });

  it("max_awaiting_rel limits incoming QoS 2 messages awaiting PUBREL", async () => {
    const topic = `rel/${uid()}`;
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const { raw, connack } = await Raw.connect(node(), v);
    if (v === 5) expect(connack.properties?.receiveMaximum).toBe(2);
    for (const id of [1, 2]) {
      raw.send({ cmd: "publish", topic, payload: `p${id}`, qos: 2, messageId: id, dup: false, retain: false });
      await raw.next("pubrec");
    }
    raw.send({ cmd: "publish", topic, payload: "p3", qos: 2, messageId: 3, dup: false, retain: false });
    if (v === 5) {
      // [MQTT-3.3.4-9] more than Receive Maximum unacknowledged QoS 2 PUBLISH: DISCONNECT 0x93.
      expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x93);
    } else {
      const pub = await connect(node(), v);
      await barrier(pub, sub, topic);
    }
    expect(sub.inbox.payloads()).not.toContain("p3");
  });
});

describe.each([4, 5] as const)("mqtt.max_qos_allowed = 1, protocol %i", (v: Proto) => {
  const node = useNode({ "mqtt.max_qos_allowed": "1" });

  it("caps the granted QoS in SUBACK", async () => {
    const { raw, connack } = await Raw.connect(node(), v);
    if (v === 5) expect((connack as IConnackPacket).properties?.maximumQoS).toBe(1);
    const ack = await raw.subscribe([
      { topic: `cap/${uid()}`, qos: 2 },
      { topic: `cap/${uid()}`, qos: 1 },
      { topic: `cap/${uid()}`, qos: 0 },
    ]);
    expect(ack.granted).toEqual([1, 1, 0]);
  });

  it.runIf(v === 5)("5.0: a will with QoS 2 is refused with CONNACK 0x9B [MQTT-3.2.2-12]", async () => {
    const { raw, connack } = await Raw.connect(node(), 5, {
      will: { topic: `cap/${uid()}`, payload: Buffer.from("w"), qos: 2, retain: false },
    });
    expect(connack.reasonCode).toBe(0x9b);
    await raw.closed();
  });

  it.runIf(v === 5)("5.0: a QoS 2 PUBLISH gets DISCONNECT 0x9B", async () => {
    const { raw } = await Raw.connect(node(), 5);
    raw.send({ cmd: "publish", topic: `cap/${uid()}`, payload: "x", qos: 2, messageId: 1, dup: false, retain: false });
    expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x9b);
  });
});
