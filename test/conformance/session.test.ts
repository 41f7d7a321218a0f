// Session state conformance (MQTT 3.1.1 sections 3.1.2.4, 3.2.2.2, 4.1, 4.4; MQTT 5.0 sections
// 3.1.2.4, 3.1.2.11.2, 3.2.2.2, 4.1, 4.4): Clean Session / Clean Start [MQTT-3.1.2-4..6],
// Session Present [MQTT-3.2.2-1..3], Session Expiry Interval, subscriptions and QoS 1/2 messages
// kept for an offline client [MQTT-3.1.2-5], the queue limit (max_mqueue_len, oldest dropped),
// QoS 0 offline queueing (mqueue_store_qos0), redelivery of unacknowledged PUBLISH with DUP and
// of PUBREL on reconnect with the original packet ids [MQTT-4.4.0-1], session takeover
// [MQTT-3.1.4-3] (5.0 DISCONNECT 0x8E).

import type { IDisconnectPacket, IPubrelPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import {
  barrier,
  connect,
  offline,
  type Proto,
  persistent,
  Raw,
  rawPersistent,
  uid,
  useNode,
  waitUntil,
} from "./helpers.ts";

describe.each([4, 5] as const)("sessions, protocol %i", (v: Proto) => {
  const node = useNode();

  it("a clean session starts without state and leaves none [MQTT-3.1.2-6]", async () => {
    const id = uid("s");
    const s1 = await connect(node(), v, { clientId: id, ...persistent(v) });
    await s1.c.subscribeAsync(`cs/${id}`, { qos: 1 });
    await s1.c.endAsync();
    await offline(node(), id);
    const s2 = await connect(node(), v, { clientId: id, clean: true });
    expect(s2.connack.sessionPresent).toBe(false);
    expect(node().services.subscriptions.ofClient(id)).toEqual([]);
    await s2.c.subscribeAsync(`cs/${id}/b`, { qos: 1 });
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`cs/${id}`, "old", { qos: 1 });
    expect(await barrier(pub, s2, `cs/${id}/b`)).toEqual([]);
    await s2.c.endAsync();
    await offline(node(), id);
    const s3 = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect(s3.connack.sessionPresent).toBe(false);
  });

  it("sets Session Present only when a session was resumed [MQTT-3.2.2-2, MQTT-3.2.2-3]", async () => {
    const id = uid("s");
    const a = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect(a.connack.sessionPresent).toBe(false);
    await a.c.endAsync();
    await offline(node(), id);
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect(b.connack.sessionPresent).toBe(true);
  });

  it("keeps subscriptions and queued QoS 1/2 messages while the client is offline", async () => {
    const id = uid("s");
    const topic = `keep/${id}`;
    const a = await connect(node(), v, { clientId: id, ...persistent(v) });
    await a.c.subscribeAsync(`${topic}/#`, { qos: 2 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`${topic}/1`, "q1", { qos: 1 });
    await pub.c.publishAsync(`${topic}/2`, "q2", { qos: 2 });
    expect(node().services.clients.lookup(id)[0].mqueue_len).toBe(2);
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect(b.connack.sessionPresent).toBe(true);
    const got = await b.inbox.take(2);
    expect(got.map((m) => [m.topic, m.payload, m.packet.qos])).toEqual([
      [`${topic}/1`, "q1", 1],
      [`${topic}/2`, "q2", 2],
    ]);
  });

  it("queues QoS 0 messages for an offline client (mqueue_store_qos0 on)", async () => {
    const id = uid("s");
    const a = await connect(node(), v, { clientId: id, ...persistent(v) });
    await a.c.subscribeAsync(`q0/${id}`, { qos: 1 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`q0/${id}`, "zero", { qos: 0 });
    await pub.c.publishAsync(`q0/${id}`, "one", { qos: 1 });
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    const got = await b.inbox.take(2);
    expect(got.map((m) => [m.payload, m.packet.qos])).toEqual([
      ["zero", 0],
      ["one", 1],
    ]);
  });

  it("resends an unacknowledged QoS 1 PUBLISH with DUP and its packet id on reconnect [MQTT-4.4.0-1]", async () => {
    const id = uid("s");
    const first = await Raw.connect(node(), v, rawPersistent(v, id));
    await first.raw.subscribe(`dup/${id}`, 1);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`dup/${id}`, "r1", { qos: 1 });
    const p1 = await first.raw.nextPublish();
    expect(p1.dup).toBe(false);
    first.raw.destroy();
    await offline(node(), id);
    const again = await Raw.connect(node(), v, rawPersistent(v, id));
    expect(again.connack.sessionPresent).toBe(true);
    const p2 = await again.raw.nextPublish();
    expect([p2.dup, p2.messageId, p2.qos, p2.payload.toString()]).toEqual([true, p1.messageId, 1, "r1"]);
    again.raw.send({ cmd: "puback", messageId: p2.messageId });
    expect(await again.raw.barrier()).toEqual([]);
  });

  it("resends PUBREL (not PUBLISH) for a QoS 2 message whose PUBREC was received [MQTT-4.4.0-1]", async () => {
    const id = uid("s");
    const first = await Raw.connect(node(), v, rawPersistent(v, id));
    await first.raw.subscribe(`rel/${id}`, 2);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`rel/${id}`, "x", { qos: 2 });
    const p1 = await first.raw.nextPublish();
    first.raw.send({ cmd: "pubrec", messageId: p1.messageId });
    await first.raw.next("pubrel");
    first.raw.destroy();
    await offline(node(), id);
    const again = await Raw.connect(node(), v, rawPersistent(v, id));
    const rel = (await again.raw.next("pubrel")) as IPubrelPacket;
    expect(rel.messageId).toBe(p1.messageId);
    again.raw.send({ cmd: "pubcomp", messageId: rel.messageId });
    expect((await again.raw.barrier()).map((p) => p.cmd)).toEqual([]);
  });

  it("takes over a session: the old connection is closed [MQTT-3.1.4-3]", async () => {
    const id = uid("s");
    const old = await Raw.connect(node(), v, rawPersistent(v, id));
    await old.raw.subscribe(`take/${id}`, 1);
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect(b.connack.sessionPresent).toBe(true);
    if (v === 5) expect(((await old.raw.next("disconnect")) as IDisconnectPacket).reasonCode).toBe(0x8e);
    await old.raw.closed();
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`take/${id}`, "to-new", { qos: 1 });
    expect((await b.inbox.next()).payload).toBe("to-new");
    expect(b.c.connected).toBe(true);
  });
});

describe("5.0 Session Expiry Interval", () => {
  const node = useNode();

  it("ends the session at disconnect when the interval is absent (0)", async () => {
    const id = uid("e");
    const a = await connect(node(), 5, { clientId: id, clean: false });
    await a.c.subscribeAsync(`e/${id}`);
    await a.c.endAsync();
    await waitUntil(() => node().services.clients.lookup(id).length === 0, "session gone");
    const b = await connect(node(), 5, { clientId: id, clean: false });
    expect(b.connack.sessionPresent).toBe(false);
  });

  it("keeps the session for the interval, then discards it", async () => {
    const id = uid("e");
    const a = await connect(node(), 5, { clientId: id, ...persistent(5, 1) });
    await a.c.subscribeAsync(`e/${id}`);
    await a.c.endAsync();
    await offline(node(), id);
    const b = await connect(node(), 5, { clientId: id, ...persistent(5, 1) });
    expect(b.connack.sessionPresent).toBe(true);
    await b.c.endAsync();
    await offline(node(), id);
    const t0 = Date.now();
    await waitUntil(() => node().services.clients.lookup(id).length === 0, "session expiry");
    expect(Date.now() - t0).toBeGreaterThanOrEqual(800);
    const c = await connect(node(), 5, { clientId: id, ...persistent(5, 1) });
    expect(c.connack.sessionPresent).toBe(false);
    expect(node().services.subscriptions.ofClient(id)).toEqual([]);
  });
});

describe("3.1.1 persistent session expiry (zone.session_expiry_interval)", () => {
  const node = useNode({ "zone.external.session_expiry_interval": "1s" });

  it("discards a clean-session-off session after the zone's interval", async () => {
    const id = uid("e");
    const a = await connect(node(), 4, { clientId: id, clean: false });
    await a.c.endAsync();
    await offline(node(), id);
    expect(node().services.clients.lookup(id)).toHaveLength(1);
    await waitUntil(() => node().services.clients.lookup(id).length === 0, "session expiry");
    const b = await connect(node(), 4, { clientId: id, clean: false });
    expect(b.connack.sessionPresent).toBe(false);
  });
});

describe.each([4, 5] as const)("offline queue limits, protocol %i", (v: Proto) => {
  const node = useNode({ "zone.external.max_mqueue_len": "2", "zone.external.mqueue_store_qos0": "false" });

  it("drops the oldest message when max_mqueue_len is reached", async () => {
    const id = uid("m");
    const a = await connect(node(), v, { clientId: id, ...persistent(v) });
    await a.c.subscribeAsync(`mq/${id}`, { qos: 1 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), v);
    for (const p of ["m1", "m2", "m3"]) await pub.c.publishAsync(`mq/${id}`, p, { qos: 1 });
    expect(node().services.clients.lookup(id)[0].mqueue_dropped).toBe(1);
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect((await b.inbox.take(2)).map((m) => m.payload)).toEqual(["m2", "m3"]);
    expect(await barrier(pub, b, `mq/${id}`, 2)).toEqual([]);
  });

  it("does not queue QoS 0 messages for an offline client (mqueue_store_qos0 off)", async () => {
    const id = uid("m");
    const a = await connect(node(), v, { clientId: id, ...persistent(v) });
    await a.c.subscribeAsync(`q0/${id}`, { qos: 1 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(`q0/${id}`, "zero", { qos: 0 });
    await pub.c.publishAsync(`q0/${id}`, "one", { qos: 1 });
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    expect((await b.inbox.next()).payload).toBe("one");
    expect(await barrier(pub, b, `q0/${id}`, 1)).toEqual([]);
    expect(b.inbox.payloads()).not.toContain("zero");
  });
});
