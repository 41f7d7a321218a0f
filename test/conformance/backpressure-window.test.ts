// The high watermark of a connected subscriber's queue is at most two inflight windows (session.ts,
// highWatermark): with the default queue of 1,000 and window of 32, a QoS 1 publisher's
// acknowledgements wait once 64 messages are queued, not 500.

import { describe, expect, it } from "vitest";
import { highWatermark } from "../../src/broker/session/session.ts";
import { Raw, uid, useNode, waitUntil } from "./helpers.ts";

const node = useNode();

/** A QoS 1 PUBLISH of 64 bytes through the raw client's own encoder. */
function publish(client: Raw, topic: string, messageId: number): void {
  client.send({ cmd: "publish", topic, payload: Buffer.alloc(64, 7), qos: 1, messageId, retain: false, dup: false });
}

describe("the high watermark follows the inflight window", () => {
  it("is half the queue bound, at most two windows, never under 8", () => {
    expect(highWatermark(1000, 32)).toBe(64);
    expect(highWatermark(20, 32)).toBe(10);
    expect(highWatermark(0, 32)).toBe(64);
    expect(highWatermark(0, 65535)).toBe(5000);
    expect(highWatermark(10, 1)).toBe(8);
  });

  it("QoS 1: a subscriber with the default queue holds its publisher from 64 queued messages", async () => {
    const topic = `bpw/${uid()}`;
    const id = uid("s");
    const { raw: sub } = await Raw.connect(node(), 4, { clientId: id });
    await sub.subscribe(topic, 1);
    sub.pauseReading();
    const session = () => node().broker.sessions.lookup(id);
    const { raw: pub } = await Raw.connect(node(), 4);
    // The window (32) goes out; 60 wait in the queue, under the watermark: every one acknowledged.
    let next = 1;
    for (; next <= 32 + 60; next++) publish(pub, topic, next);
    await waitUntil(() => pub.received("puback") === 92, "92 publishes acknowledged");
    expect(session()?.mqueue.length).toBe(60);
    expect(session()?.holding).toBe(false);
    // Ten more take the queue past 64: the publisher is held, far below half the queue (500).
    for (; next <= 32 + 70; next++) publish(pub, topic, next);
    await waitUntil(() => session()?.holding === true, "the subscriber holds its publisher");
    await waitUntil(() => session()?.mqueue.length === 70, "70 queued");
    expect(pub.received("puback")).toBeLessThan(102);
    // Once it reads and acknowledges, everything goes through and the hold ends.
    sub.resumeReading();
    for (let got = 0; got < 102; got++) {
      const p = await sub.nextPublish(10_000);
      sub.send({ cmd: "puback", messageId: p.messageId as number });
    }
    await waitUntil(() => pub.received("puback") === 102, "every publish acknowledged");
    expect(session()?.holding).toBe(false);
  });
});
