// Ingress back-pressure from a subscriber that does not keep up (session.ts, `held`): a QoS 0
// publisher's connection stops reading while the subscriber's socket takes nothing more, so a
// subscriber that reads again gets every message; QoS 1 acknowledgements are held while its queue
// is over its high watermark. A hold ends after HOLD_LIMIT_MS without anything sent: a subscriber
// that stopped reading stalls its publishers no longer, and its full queue drops the oldest
// instead; a slow subscriber that still takes messages holds on.

import mqttPacket from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { HOLD_LIMIT_MS } from "../../src/broker/session/session.ts";
import { Raw, uid, useNode, waitUntil } from "./helpers.ts";

/** A queue of 20: without back-pressure, most of the flood below would be dropped. */
const node = useNode({ "zone.external.max_mqueue_len": "20" });

function counter(name: string): number {
  return node().services.metrics.metrics()[name] ?? 0;
}

function holding(clientId: string): boolean {
  return node().broker.sessions.lookup(clientId)?.holding ?? false;
}

/** A paused subscriber of `topic` at `qos`, and its client id. */
async function stalledSubscriber(topic: string, qos: 0 | 1): Promise<{ sub: Raw; id: string }> {
  const id = uid("s");
  const { raw: sub } = await Raw.connect(node(), 4, { clientId: id });
  await sub.subscribe(topic, qos);
  sub.pauseReading();
  return { sub, id };
}

function publishFrame(topic: string, size: number, qos: 0 | 1, messageId?: number): Buffer {
  return mqttPacket.generate({
    cmd: "publish",
    topic,
    payload: Buffer.alloc(size, 7),
    qos,
    messageId,
    retain: false,
    dup: false,
  });
}

describe("ingress back-pressure from a subscriber that does not keep up", () => {
  it("QoS 0: the publisher waits while the subscriber's socket is full, and nothing is lost", async () => {
    const topic = `bp/${uid()}`;
    const { sub, id } = await stalledSubscriber(topic, 0);
    const dropped0 = counter("delivery.dropped");
    const read0 = counter("messages.qos0.received");
    const { raw: pub } = await Raw.connect(node(), 4);
    // 40 MB: far more than the subscriber's socket (4 MB watermark), the kernel's buffers and a
    // queue of 20 hold together.
    const n = 600;
    const frame = publishFrame(topic, 65_536, 0);
    for (let i = 0; i < n; i++) pub.sendBytes(frame);
    await waitUntil(() => holding(id), "the subscriber holds its publisher");
    expect(counter("messages.qos0.received") - read0).toBeLessThan(n);
    sub.resumeReading();
    await waitUntil(() => sub.received("publish") === n, `${n} messages delivered`, 20_000);
    expect(counter("delivery.dropped") - dropped0).toBe(0);
    expect(holding(id)).toBe(false);
  });

  it("QoS 1: acknowledgements wait while the subscriber's queue is over its high watermark", async () => {
    const topic = `bp/${uid()}`;
    const { sub, id } = await stalledSubscriber(topic, 1);
    const { raw: pub } = await Raw.connect(node(), 4);
    // The subscriber's window (32) and its queue (20) take 52; from the queue's 10th on, the
    // acknowledgements wait (this publisher sends all at once: a client with a window would stop).
    const n = 50;
    for (let i = 1; i <= n; i++) pub.sendBytes(publishFrame(topic, 64, 1, i));
    await waitUntil(() => holding(id), "the subscriber holds its publisher");
    expect(pub.received("puback")).toBeLessThan(n);
    // It reads again and acknowledges what it gets: its window moves on until everything is through.
    sub.resumeReading();
    const acked = new Set<number>();
    while (acked.size < n) {
      const p = await sub.nextPublish(10_000);
      acked.add(p.messageId as number);
      sub.send({ cmd: "puback", messageId: p.messageId as number });
    }
    await waitUntil(() => pub.received("puback") === n, "every publish acknowledged");
    expect(holding(id)).toBe(false);
  });

  it(`QoS 1: a slow subscriber that still takes messages holds its publisher past ${HOLD_LIMIT_MS} ms and loses nothing`, async () => {
    const topic = `bp/${uid()}`;
    const id = uid("s");
    const { raw: sub } = await Raw.connect(node(), 4, { clientId: id });
    await sub.subscribe(topic, 1);
    const full0 = counter("delivery.dropped.queue_full");
    const { raw: pub } = await Raw.connect(node(), 4);
    // 50 publishes: the window (32) goes out, the queue holds 18 (over its high watermark of 10).
    const n = 50;
    for (let i = 1; i <= n; i++) pub.sendBytes(publishFrame(topic, 64, 1, i));
    await waitUntil(() => holding(id), "the subscriber holds its publisher");
    const heldAt = Date.now();
    // One acknowledgement every 300 ms: the queue reaches its low watermark (5) after about 4 s.
    let acked = 0;
    const acker = setInterval(() => {
      void sub.nextPublish(1000).then((p) => {
        acked++;
        sub.send({ cmd: "puback", messageId: p.messageId as number });
      });
    }, 300);
    try {
      await waitUntil(() => !holding(id), "the hold ends", 10_000);
      const queued = node().broker.sessions.lookup(id)?.mqueue.length ?? -1;
      expect(Date.now() - heldAt).toBeGreaterThan(HOLD_LIMIT_MS);
      // Let go because the queue drained to its low watermark, not because time ran out.
      expect(queued).toBeLessThanOrEqual(5);
      expect(acked).toBeGreaterThan(0);
    } finally {
      clearInterval(acker);
    }
    expect(counter("delivery.dropped.queue_full") - full0).toBe(0);
  });

  it("QoS 0: a held publisher is not timed out by its keepalive while the broker does not read it", async () => {
    const topic = `bp/${uid()}`;
    const { id } = await stalledSubscriber(topic, 0);
    const read0 = counter("messages.qos0.received");
    // Keepalive 1 s: without a packet read for 1.5 s, the broker would close it; the hold lasts 2 s.
    const { raw: pub } = await Raw.connect(node(), 4, { keepalive: 1 });
    const n = 600;
    const frame = publishFrame(topic, 65_536, 0);
    for (let i = 0; i < n; i++) pub.sendBytes(frame);
    await waitUntil(() => holding(id), "the subscriber holds its publisher");
    await waitUntil(() => !holding(id), "the hold ends", HOLD_LIMIT_MS + 3000);
    await waitUntil(() => counter("messages.qos0.received") - read0 >= n, `all ${n} publishes read`, 10_000);
    expect(pub.isClosed).toBe(false);
  });

  for (const qos of [0, 1] as const) {
    it(`QoS ${qos}: a subscriber that stopped reading holds its publisher ${HOLD_LIMIT_MS} ms at most, then drops the oldest`, async () => {
      const topic = `bp/${uid()}`;
      const { id } = await stalledSubscriber(topic, qos);
      const full0 = counter("delivery.dropped.queue_full");
      const read0 = counter("messages.qos0.received");
      const { raw: pub } = await Raw.connect(node(), 4);
      const n = qos === 0 ? 600 : 200;
      for (let i = 1; i <= n; i++)
        pub.sendBytes(publishFrame(topic, qos === 0 ? 65_536 : 64, qos, qos === 1 ? i : undefined));
      await waitUntil(() => holding(id), "the subscriber holds its publisher");
      const heldAt = Date.now();
      // The hold ends; the broker reads (QoS 0) or acknowledges (QoS 1) everything, and the
      // subscriber's full queue drops the oldest.
      const all = () => (qos === 0 ? counter("messages.qos0.received") - read0 : pub.received("puback"));
      await waitUntil(() => !holding(id), "the hold ends", HOLD_LIMIT_MS + 3000);
      // Seen from here (the hold began before it was first seen): not let go early.
      expect(Date.now() - heldAt).toBeGreaterThanOrEqual(HOLD_LIMIT_MS / 2);
      await waitUntil(() => all() >= n, `all ${n} publishes read`, 10_000);
      expect(counter("delivery.dropped.queue_full") - full0).toBeGreaterThan(0);
      // It holds no one again before it has caught up.
      expect(holding(id)).toBe(false);
    });
  }
});
