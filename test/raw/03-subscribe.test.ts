// 03-subscribe: SUBSCRIBE / UNSUBSCRIBE at the byte level.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 2.3.1 (non-zero packet identifier, MQTT-2.3.1-1), 3.8.1 (SUBSCRIBE fixed
//     header flags 0010, MQTT-3.8.1-1), 3.8.3 (at least one filter, MQTT-3.8.3-3; reserved bits
//     and QoS 3 are malformed, MQTT-3-8.3-4), 3.8.4 (SUBACK, one code per filter, MQTT-3.8.4-5),
//     3.9 SUBACK, 3.10.1 (UNSUBSCRIBE flags, MQTT-3.10.1-1), 3.10.3 (at least one filter,
//     MQTT-3.10.3-2), 3.11 UNSUBACK, 3.3.1.3 (retained messages sent on subscribe with RETAIN 1,
//     many of them in batches),
//     4.8 (protocol violation -> close).
//   MQTT 5.0 (OASIS) 2.2.1 (MQTT-2.2.1-3), 3.8.1, 3.8.3.1 (subscription options, reserved bits
//     6-7, MQTT-3.8.3-5), 3.9.3 / 3.11.3 (reason codes), 4.13.

import type { IPublishPacket, ISubackPacket, IUnsubackPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RETAINED_BATCH } from "../../src/retainer/retainer.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { expectErrorClose } from "./expect-close.ts";
import { destroyAll, frame, RawClient, str } from "./raw-client.ts";

let node: TestNode;
let port: number;
let by: Bystander;

beforeAll(async () => {
  node = await startTestNode();
  port = node.port("tcp");
  by = await bystander(node.url);
});
afterAll(async () => {
  await by?.end();
  await node?.close();
});
afterEach(() => destroyAll());

let ids = 0;
const cid = (what: string): string => `${what}-${++ids}`;
/** 5.0 packets carry a property length after the packet id. */
const props = (ver: number): number[] => (ver === 5 ? [0] : []);

describe.each([4, 5] as const)(
  "03-subscribe: bad SUBSCRIBE / UNSUBSCRIBE closes only that connection (protocol %i)",
  (ver) => {
    // 3.1.1 3.8.3: no filter is a protocol violation [MQTT-3.8.3-3] -> close (4.8). 5.0 3.8.3: "A
    // SUBSCRIBE packet with no Payload is a Protocol Error" -> DISCONNECT 0x82 (or 0x81), 4.13.
    // Broker bug (5.0): the parser lets it through and the broker fails building an empty SUBACK
    // ("Invalid qos vector"), so the client gets DISCONNECT 0x83 Implementation specific error.
    it("SUBSCRIBE with no payload (no topic filter) -> closed [MQTT-3.8.3-3]", async () => {
      const c = await RawClient.connected(port, ver, cid("nopayload"));
      await c.send(frame(0x82, [0x00, 0x01, ...props(ver)]));
      await expectErrorClose(c, [0x81, 0x82]);
      await by.check();
    });

    it("SUBSCRIBE with fixed header flags 0000 -> closed [MQTT-3.8.1-1]", async () => {
      const c = await RawClient.connected(port, ver, cid("subflags"));
      await c.send(frame(0x80, [0x00, 0x01, ...props(ver), ...str("a/b"), 0x00]));
      await expectErrorClose(c, [0x81]);
      await by.check();
    });

    it("SUBSCRIBE requesting QoS 3 -> closed [MQTT-3-8.3-4]", async () => {
      const c = await RawClient.connected(port, ver, cid("subq3"));
      await c.send(frame(0x82, [0x00, 0x01, ...props(ver), ...str("a/b"), 0x03]));
      await expectErrorClose(c, [0x81]);
      await by.check();
    });

    it("SUBSCRIBE with reserved option bits set -> closed", async () => {
      // 3.1.1: bits 7-2 are reserved [MQTT-3-8.3-4]; 5.0: bits 7-6 are reserved [MQTT-3.8.3-5].
      const c = await RawClient.connected(port, ver, cid("subres"));
      await c.send(frame(0x82, [0x00, 0x01, ...props(ver), ...str("a/b"), ver === 5 ? 0xc0 : 0x04]));
      await expectErrorClose(c, [0x81]);
      await by.check();
    });

    it("SUBSCRIBE whose filter length runs past the packet -> closed", async () => {
      const c = await RawClient.connected(port, ver, cid("subshort"));
      await c.send(frame(0x82, [0x00, 0x01, ...props(ver), 0x00, 0x09, 0x61]));
      await expectErrorClose(c, [0x81]);
      await by.check();
    });

    // 3.1.1 3.10.3: "The Payload of an UNSUBSCRIBE packet MUST contain at least one Topic
    // Filter. An UNSUBSCRIBE packet with no payload is a protocol violation" [MQTT-3.10.3-2].
    // 5.0 3.10.3: a Protocol Error (DISCONNECT 0x82). Broker bug: 3.1.1 answers UNSUBACK and keeps
    // the connection; 5.0 fails building the UNSUBACK and sends DISCONNECT 0x83.
    it("UNSUBSCRIBE with no payload -> closed [MQTT-3.10.3-2]", async () => {
      const c = await RawClient.connected(port, ver, cid("unsubempty"));
      await c.send(frame(0xa2, [0x00, 0x01, ...props(ver)]));
      await expectErrorClose(c, [0x81, 0x82]);
      await by.check();
    });

    it("UNSUBSCRIBE with fixed header flags 0000 -> closed [MQTT-3.10.1-1]", async () => {
      const c = await RawClient.connected(port, ver, cid("unsubflags"));
      await c.send(frame(0xa0, [0x00, 0x01, ...props(ver), ...str("a/b")]));
      await expectErrorClose(c, [0x81]);
      await by.check();
    });

    // 3.1.1 2.3.1 / 5.0 2.2.1: SUBSCRIBE MUST contain a non-zero Packet Identifier; a protocol
    // violation closes the connection (3.1.1 4.8, 5.0 4.13).
    it("SUBSCRIBE with packet identifier 0 -> closed [MQTT-2.3.1-1]", async () => {
      const c = await RawClient.connected(port, ver, cid("subpid0"));
      await c.send(frame(0x82, [0x00, 0x00, ...props(ver), ...str("a/b"), 0x00]));
      const first = await c.next().catch(() => null);
      if (first !== null) expect(first.cmd, "SUBACK for packet id 0").toBe("disconnect");
      await c.closed();
    });

    it("UNSUBSCRIBE with packet identifier 0 -> closed [MQTT-2.3.1-1]", async () => {
      const c = await RawClient.connected(port, ver, cid("unsubpid0"));
      await c.send(frame(0xa2, [0x00, 0x00, ...props(ver), ...str("a/b")]));
      const first = await c.next().catch(() => null);
      if (first !== null) expect(first.cmd, "UNSUBACK for packet id 0").toBe("disconnect");
      await c.closed();
    });
  },
);

describe.each([4, 5] as const)("03-subscribe: SUBACK / UNSUBACK bytes (protocol %i)", (ver) => {
  it("two filters -> one SUBACK code per filter, same packet id [MQTT-3.8.4-5]", async () => {
    const c = await RawClient.connected(port, ver, cid("suback"));
    const mark = c.bytes().length;
    await c.send(frame(0x82, [0x01, 0x02, ...props(ver), ...str("s/+"), 0x01, ...str("s/#"), 0x02]));
    const ack = (await c.expect("suback")) as ISubackPacket;
    expect(ack.messageId).toBe(0x0102);
    expect(ack.granted).toEqual([1, 2]);
    if (ver === 4) expect([...c.bytes().subarray(mark)]).toEqual([0x90, 0x04, 0x01, 0x02, 0x01, 0x02]);
  });

  it("UNSUBSCRIBE -> UNSUBACK with the same packet id (5.0: 0x00 / 0x11 per filter)", async () => {
    const c = await RawClient.connected(port, ver, cid("unsuback"));
    expect(await c.subscribe("u/1", 0, 5)).toBe(0);
    const mark = c.bytes().length;
    await c.send(frame(0xa2, [0x00, 0x06, ...props(ver), ...str("u/1"), ...str("u/never")]));
    const ack = (await c.expect("unsuback")) as IUnsubackPacket;
    expect(ack.messageId).toBe(6);
    if (ver === 4) expect([...c.bytes().subarray(mark)]).toEqual([0xb0, 0x02, 0x00, 0x06]);
    else expect(ack.granted).toEqual([0x00, 0x11]);
  });

  it("a retained message comes with the subscription, RETAIN set [MQTT-3.3.1-6]", async () => {
    const topic = `ret/${ver}`;
    const p = await RawClient.connected(port, ver, cid("retpub"));
    await p.send(frame(0x33, [...str(topic), 0x00, 0x01, ...props(ver), ...Buffer.from("kept")]));
    await p.expect("puback");
    const c = await RawClient.connected(port, ver, cid("retsub"));
    await c.send(frame(0x82, [0x00, 0x01, ...props(ver), ...str(topic), 0x00]));
    // The server may send matching PUBLISHes before the SUBACK (3.1.1 section 3.8.4).
    const two = [await c.next(), await c.next()];
    expect(two.map((x) => x.cmd).sort()).toEqual(["publish", "suback"]);
    const pub = two.find((x) => x.cmd === "publish") as IPublishPacket;
    expect(pub.retain).toBe(true);
    expect(pub.payload.toString()).toBe("kept");
    // Clear it again (empty retained payload).
    await p.send(frame(0x31, [...str(topic), ...props(ver)]));
    await p.send([0xc0, 0x00]);
    await p.expect("pingresp");
  });
});

// A subscription matching more retained messages than one batch (RETAINED_BATCH) gets them over
// several turns of the event loop, each exactly once with RETAIN set; the batches after the first
// stop once the subscription is gone, so an UNSUBSCRIBE sent with the SUBSCRIBE leaves exactly one.
const COUNT = Math.floor(RETAINED_BATCH * 2.5);

/** Stores COUNT retained messages under `prefix/` (QoS 0, one write), answered once all are in. */
async function storeRetained(ver: 4 | 5, prefix: string): Promise<void> {
  const p = await RawClient.connected(port, ver, `${prefix}-pub`);
  const frames: Buffer[] = [];
  for (let i = 0; i < COUNT; i++) frames.push(frame(0x31, [...str(`${prefix}/${i}`), ...props(ver), 0x76, i & 0xff]));
  await p.send(Buffer.concat(frames));
  await p.send([0xc0, 0x00]);
  await p.expect("pingresp");
  expect(node.retainer.count).toBeGreaterThanOrEqual(COUNT);
}

describe.each([4, 5] as const)("03-subscribe: retained messages in batches (protocol %i)", (ver) => {
  it(`delivers ${COUNT} retained messages to one subscription, each once, RETAIN set`, async () => {
    const prefix = `bulk${ver}`;
    await storeRetained(ver, prefix);
    const c = await RawClient.connected(port, ver, `${prefix}-sub`);
    await c.send(frame(0x82, [0x00, 0x01, ...props(ver), ...str(`${prefix}/#`), 0x00]));
    const seen = new Set<string>();
    let subacks = 0;
    while (seen.size < COUNT) {
      const p = await c.next();
      if (p.cmd === "suback") {
        subacks++;
        continue;
      }
      expect(p.cmd).toBe("publish");
      const pub = p as IPublishPacket;
      expect(pub.retain).toBe(true);
      expect(seen.has(pub.topic), pub.topic).toBe(false);
      seen.add(pub.topic);
    }
    expect(subacks).toBe(1);
    // Nothing more: the next packet is the answer to a PINGREQ.
    await c.send([0xc0, 0x00]);
    expect((await c.next()).cmd).toBe("pingresp");
    await by.check();
  });

  it("stops after the first batch when the subscription is gone before the next turn", async () => {
    const prefix = `gone${ver}`;
    await storeRetained(ver, prefix);
    const c = await RawClient.connected(port, ver, `${prefix}-sub`);
    // SUBSCRIBE and UNSUBSCRIBE in one write: read in the same turn, before the second batch.
    await c.send(
      Buffer.concat([
        frame(0x82, [0x00, 0x01, ...props(ver), ...str(`${prefix}/#`), 0x00]),
        frame(0xa2, [0x00, 0x02, ...props(ver), ...str(`${prefix}/#`)]),
      ]),
    );
    expect((await c.next()).cmd).toBe("suback");
    let publishes = 0;
    for (let p = await c.next(); p.cmd !== "unsuback"; p = await c.next()) {
      expect(p.cmd).toBe("publish");
      publishes++;
    }
    expect(publishes).toBe(RETAINED_BATCH);
    await c.send([0xc0, 0x00]);
    expect((await c.next()).cmd).toBe("pingresp");
  });
});
