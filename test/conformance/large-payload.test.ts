// Large payloads on the delivery path: PUBLISH bytes of a payload of 4 KB or more are built
// without it and the message's payload follows them on the socket. Every byte must arrive intact,
// at every QoS, for 3.1.1 and 5.0 subscribers (5.0 with a subscription identifier: per-delivery
// bytes), retained too, and a 5.0 client's Maximum Packet Size still counts the whole packet.
// An offline session keeps a large payload in memory of its own, not the whole socket read it
// came in with other messages.

import mqttPacket from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { isKept } from "../../src/mqtt/kept-bytes.ts";
import { cleanup, connect, offline, type Proto, persistent, Raw, uid, useNode, waitUntil } from "./helpers.ts";

const node = useNode();

function payloadOf(size: number, seed: number): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = (i * 31 + seed) & 0xff;
  return b;
}

/** Publishes `data` (QoS 1 unless told) and 50 KB nobody subscribes to in one write: the broker reads them together. */
async function publishWithBulk(topic: string, data: Buffer, qos: 1 | 2 = 1): Promise<Raw> {
  const { raw } = await Raw.connect(node(), 4);
  raw.sendBytes(
    Buffer.concat([
      mqttPacket.generate({ cmd: "publish", topic, payload: data, qos, messageId: 1, retain: false, dup: false }),
      mqttPacket.generate({
        cmd: "publish",
        topic: `x/${uid()}`,
        payload: Buffer.alloc(50_000),
        qos: 0,
        retain: false,
        dup: false,
      }),
    ]),
  );
  return raw;
}

/** A persistent session subscribed to `topic` at QoS 1, its client gone. */
async function offlineSubscriber(clientId: string, topic: string): Promise<void> {
  const sub = await connect(node(), 4, { clientId, ...persistent(4) });
  await sub.c.subscribeAsync(topic, { qos: 1 });
  await sub.c.endAsync();
  await offline(node(), clientId);
}

describe("large payloads", () => {
  for (const v of [4, 5] as Proto[]) {
    it(`arrive intact at QoS 0, 1, 2 (${v === 5 ? "5.0" : "3.1.1"}), with several subscribers`, async () => {
      const topic = `large/${uid()}`;
      const subs = await Promise.all([connect(node(), v), connect(node(), 5), connect(node(), 4)]);
      for (const [i, s] of subs.entries()) {
        const opts = i === 1 ? { qos: 2 as const, properties: { subscriptionIdentifier: 7 } } : { qos: 2 as const };
        await s.c.subscribeAsync(topic, opts);
      }
      const pub = await connect(node(), v);
      const sent = [4096, 16_384, 100_000, 300_000].flatMap((size, k) =>
        ([0, 1, 2] as const).map((qos) => ({ qos, data: payloadOf(size, k * 3 + qos) })),
      );
      const got: Buffer[][] = subs.map(() => []);
      subs.forEach((s, i) => {
        s.c.on("message", (_t, p) => got[i].push(Buffer.from(p)));
      });
      for (const m of sent) await pub.c.publishAsync(topic, m.data, { qos: m.qos });
      await waitUntil(() => got.every((g) => g.length >= sent.length), "every large message", 10_000);
      for (const g of got) {
        expect(g.map((b) => b.length)).toEqual(sent.map((m) => m.data.length));
        for (const [k, b] of g.entries()) expect(b.equals(sent[k].data), `message ${k}`).toBe(true);
      }
      await cleanup();
    });
  }

  it("a retained large payload reaches a later subscriber intact", async () => {
    const topic = `large/retained/${uid()}`;
    const data = payloadOf(50_000, 9);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, data, { qos: 1, retain: true });
    const sub = await connect(node(), 4);
    const got = new Promise<Buffer>((r) => sub.c.once("message", (_t, p) => r(Buffer.from(p))));
    await sub.c.subscribeAsync(topic, { qos: 1 });
    expect((await got).equals(data)).toBe(true);
    await pub.c.publishAsync(topic, "", { qos: 1, retain: true });
    await cleanup();
  });

  it("a 5.0 client's Maximum Packet Size counts the payload: too large is not sent, smaller is", async () => {
    const topic = `large/max/${uid()}`;
    const sub = await connect(node(), 5, { properties: { maximumPacketSize: 20_000 } });
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, payloadOf(30_000, 1), { qos: 1 });
    await pub.c.publishAsync(topic, payloadOf(10_000, 2), { qos: 1 });
    const m = await sub.inbox.next();
    expect(m.packet.payload.length).toBe(10_000);
    await cleanup();
  });

  it("an offline session keeps a large payload apart from the read it came in", async () => {
    const id = uid("off");
    const topic = `cmd/${uid()}`;
    await offlineSubscriber(id, topic);
    await offlineSubscriber(`${id}-2`, topic);
    const data = payloadOf(5000, 9);
    const pub = await publishWithBulk(topic, data);
    await pub.next("puback");
    const queued = (clientId: string) => node().broker.sessions.lookup(clientId)?.mqueue.peek()?.msg.payload;
    await waitUntil(() => queued(id) !== undefined && queued(`${id}-2`) !== undefined, "both queued");
    const kept = queued(id) as Buffer;
    expect(kept.equals(data)).toBe(true);
    // A copy of its own (unless the read happened to end with it: exactly its size then).
    expect(kept.buffer.byteLength).toBe(5000);
    expect(queued(`${id}-2`)).toBe(kept); // one copy for both
    const back = await connect(node(), 4, { clientId: id, ...persistent(4) });
    const m = await back.inbox.next();
    expect(m.packet.payload.length).toBe(5000);
    expect(Buffer.from(m.packet.payload).equals(data)).toBe(true);
    await cleanup();
  });

  it("an offline session keeps a small payload in kept memory, not the pool slab it came in", async () => {
    const id = uid("small");
    const topic = `cmd/${uid()}`;
    await offlineSubscriber(id, topic);
    const data = payloadOf(120, 4);
    const pub = await publishWithBulk(topic, data);
    await pub.next("puback");
    const queued = () => node().broker.sessions.lookup(id)?.mqueue.peek()?.msg.payload;
    await waitUntil(() => queued() !== undefined, "queued");
    const kept = queued() as Buffer;
    expect(kept.equals(data)).toBe(true);
    expect(isKept(kept)).toBe(true);
    await cleanup();
  });

  it.each([1, 2] as const)(
    "an acknowledged QoS %i message leaves nothing of itself in its inflight entry",
    async (qos) => {
      // V8 keeps the tables a long-lived Map leaves behind, with the entries they held, until a full
      // collection: an ended entry must not keep the payload (and the socket read it views).
      const id = uid("acked");
      const topic = `cmd/${uid()}`;
      const { raw: sub } = await Raw.connect(node(), 4, { clientId: id });
      sub.send({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos }] });
      await sub.next("suback");
      await publishWithBulk(topic, payloadOf(6000, 5), qos);
      const p = await sub.next("publish");
      const session = node().broker.sessions.lookup(id);
      const entry = [...(session?.inflight.values() ?? [])][0];
      expect(entry?.d.msg.payload.length).toBe(6000);
      const messageId = p.messageId as number;
      if (qos === 1) sub.send({ cmd: "puback", messageId });
      else {
        sub.send({ cmd: "pubrec", messageId });
        await sub.next("pubrel");
        sub.send({ cmd: "pubcomp", messageId });
      }
      await waitUntil(() => session?.inflight.size === 0, "acknowledged");
      expect(entry?.d.msg.payload.length).toBe(0);
      await cleanup();
    },
  );

  it("a session parked with an unacknowledged large message keeps its payload apart", async () => {
    const id = uid("park");
    const topic = `cmd/${uid()}`;
    const { raw: sub } = await Raw.connect(node(), 4, { clientId: id, clean: false });
    sub.send({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos: 1 }] });
    await sub.next("suback");
    const data = payloadOf(6000, 3);
    await publishWithBulk(topic, data);
    await sub.next("publish"); // not acknowledged: it stays in flight
    const inflight = () => [...(node().broker.sessions.lookup(id)?.inflight.values() ?? [])][0]?.d.msg.payload;
    expect(inflight()?.buffer.byteLength).toBeGreaterThan(6000); // online: a view of the read
    sub.destroy();
    await offline(node(), id);
    expect(inflight()?.buffer.byteLength).toBeLessThan(2 * 6000);
    expect(inflight()?.equals(data)).toBe(true);
    await cleanup();
  });
});
