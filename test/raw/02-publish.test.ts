// 02-publish: PUBLISH and its acknowledgements at the byte level.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 2.2.2 (fixed header flags), 2.3.1 (non-zero packet identifier,
//     MQTT-2.3.1-1), 3.3.1.2 (QoS 3 is malformed, MQTT-3.3.1-4), 3.3.2.1 (no wildcards in a topic
//     name, MQTT-3.3.2-2), 3.4-3.7 (PUBACK, PUBREC, PUBREL, PUBCOMP), 4.3.3 (QoS 2: the receiver
//     keeps the packet id until PUBREL and must not deliver a DUP again, MQTT-4.3.3-2; answers
//     PUBREL with PUBCOMP, MQTT-4.3.3-?), 4.7.3 (topic name rules: non-empty, no U+0000),
//     4.8 (protocol violation -> close).
//   MQTT 5.0 (OASIS) 3.3.2.1, 3.3.4 (PUBLISH actions), 3.4.2.1/3.5.2.1/3.7.2.1 (reason codes:
//     0x10 No matching subscribers, 0x92 Packet Identifier not found), 4.3.3, 4.13 (DISCONNECT
//     with 0x81/0x82/0x90 before closing).

import type { IPubackPacket, IPubcompPacket, IPublishPacket, IPubrecPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { expectClosedSilently, expectDisconnect, expectErrorClose } from "./expect-close.ts";
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

/** PUBLISH by hand: first byte, topic, optional packet id, (5.0) empty properties, payload. */
function publishBytes(
  ver: number,
  first: number,
  topic: string | number[],
  pid: number | null,
  payload: string,
): Buffer {
  const t = typeof topic === "string" ? str(topic) : topic;
  const id = pid === null ? [] : [pid >> 8, pid & 0xff];
  return frame(first, [...t, ...id, ...(ver === 5 ? [0] : []), ...Buffer.from(payload)]);
}

describe.each([4, 5] as const)("02-publish: invalid PUBLISH closes only that connection (protocol %i)", (ver) => {
  it.each(["a/+/b", "a/#", "#", "+"])(
    "wildcard topic name %j at QoS 0 -> closed (5.0: DISCONNECT 0x90) [MQTT-3.3.2-2]",
    async (topic) => {
      const c = await RawClient.connected(port, ver, cid("wild"));
      const before = node.broker.metrics.get("packets.publish.error");
      await c.send(publishBytes(ver, 0x30, topic, null, "x"));
      if (ver === 5) await expectDisconnect(c, 0x90);
      else await expectClosedSilently(c);
      expect(node.broker.metrics.get("packets.publish.error")).toBe(before + 1);
      await by.check();
    },
  );

  if (ver === 4) {
    it("3.1.1: wildcard topic name at QoS 1 -> closed, no PUBACK", async () => {
      const c = await RawClient.connected(port, ver, cid("wild1"));
      await c.send(publishBytes(ver, 0x32, "a/+", 3, "x"));
      await expectClosedSilently(c);
      await by.check();
    });
  }

  it("QoS bits 11 (QoS 3) -> closed [MQTT-3.3.1-4]", async () => {
    const c = await RawClient.connected(port, ver, cid("qos3"));
    const before = node.broker.metrics.get("packets.malformed");
    await c.send(publishBytes(ver, 0x36, "a/b", 1, "x"));
    await expectErrorClose(c, [0x81]);
    expect(node.broker.metrics.get("packets.malformed")).toBe(before + 1);
    await by.check();
  });

  it("QoS 1 with packet identifier 0 -> closed [MQTT-2.3.1-1]", async () => {
    const c = await RawClient.connected(port, ver, cid("pid0"));
    await c.send(publishBytes(ver, 0x32, "a/b", 0, "x"));
    await expectErrorClose(c, [0x81, 0x82]);
    await by.check();
  });

  it("empty topic name (no alias) -> closed [MQTT-4.7.3-1]", async () => {
    const c = await RawClient.connected(port, ver, cid("empty"));
    await c.send(publishBytes(ver, 0x30, "", null, "x"));
    await expectErrorClose(c, [0x81, 0x82, 0x90]);
    await by.check();
  });

  it("topic name containing U+0000 -> closed [MQTT-4.7.3-2]", async () => {
    const c = await RawClient.connected(port, ver, cid("nul"));
    await c.send(publishBytes(ver, 0x30, [0x00, 0x03, 0x61, 0x00, 0x62], null, "x"));
    await expectErrorClose(c, [0x81, 0x82, 0x90]);
    await by.check();
  });

  it("topic length pointing past the end of the packet -> closed", async () => {
    const c = await RawClient.connected(port, ver, cid("short"));
    await c.send(frame(0x30, [0x00, 0x10, 0x61]));
    await expectErrorClose(c, [0x81]);
    await by.check();
  });
});

describe.each([4, 5] as const)("02-publish: acknowledgements (protocol %i)", (ver) => {
  it("QoS 1 -> PUBACK with the same packet id", async () => {
    const c = await RawClient.connected(port, ver, cid("q1"));
    await c.send(publishBytes(ver, 0x32, "ack/none", 0x1234, "x"));
    const ack = (await c.expect("puback")) as IPubackPacket;
    expect(ack.messageId).toBe(0x1234);
    if (ver === 4) expect([...c.bytes().subarray(4)]).toEqual([0x40, 0x02, 0x12, 0x34]);
    // 5.0: nobody subscribes to ack/none; 0x10 No matching subscribers (or plain success).
    else expect([0x00, 0x10]).toContain(ack.reasonCode ?? 0);
  });
});

describe.each([4, 5] as const)("02-publish: QoS 2 exactly once at the byte level (protocol %i)", (ver) => {
  it("PUBLISH pid 7, PUBREC, DUP resend, PUBREL, PUBCOMP: one delivery", async () => {
    const topic = `q2/${ver}`;
    const sub = await RawClient.connected(port, ver, cid("q2sub"));
    expect(await sub.subscribe(topic, 1)).toBe(1);
    const pub = await RawClient.connected(port, ver, cid("q2pub"));
    const m = node.broker.metrics;
    const inuse = m.get("packets.pubrec.inuse");
    const relMissed = m.get("packets.pubrel.missed");

    const first = publishBytes(ver, 0x34, topic, 7, "once");
    await pub.send(first);
    const rec = (await pub.expect("pubrec")) as IPubrecPacket;
    expect(rec.messageId).toBe(7);
    if (ver === 5) expect(rec.reasonCode ?? 0).toBe(0);
    else expect([...pub.bytes().subarray(4)]).toEqual([0x50, 0x02, 0x00, 0x07]);

    const got = (await sub.expect("publish")) as IPublishPacket;
    expect(got.payload.toString()).toBe("once");
    expect(got.qos).toBe(1);
    await sub.sendPacket({ cmd: "puback", messageId: got.messageId });

    // The same PUBLISH again with DUP set (0x3C): acknowledged again, not delivered again.
    const dup = Buffer.from(first);
    dup[0] = 0x3c;
    await pub.send(dup);
    const rec2 = (await pub.expect("pubrec")) as IPubrecPacket;
    expect(rec2.messageId).toBe(7);
    expect(m.get("packets.pubrec.inuse")).toBe(inuse + 1);

    // PUBREL (flags 0010) -> PUBCOMP.
    const mark = pub.bytes().length;
    await pub.send([0x62, 0x02, 0x00, 0x07]);
    const comp = (await pub.expect("pubcomp")) as IPubcompPacket;
    expect(comp.messageId).toBe(7);
    if (ver === 4) expect([...pub.bytes().subarray(mark)]).toEqual([0x70, 0x02, 0x00, 0x07]);
    else expect(comp.reasonCode ?? 0).toBe(0);

    // PUBREL for an id never seen -> PUBCOMP anyway; 5.0 says 0x92 Packet Identifier not found.
    const mark2 = pub.bytes().length;
    await pub.send([0x62, 0x02, 0x00, 0x09]);
    const comp2 = (await pub.expect("pubcomp")) as IPubcompPacket;
    expect(comp2.messageId).toBe(9);
    if (ver === 5) expect(comp2.reasonCode).toBe(0x92);
    else expect([...pub.bytes().subarray(mark2)]).toEqual([0x70, 0x02, 0x00, 0x09]);
    expect(m.get("packets.pubrel.missed")).toBe(relMissed + 1);

    // A marker after all that: the subscriber's next packet is the marker, so no second copy
    // of "once" was delivered in between (same publisher -> same subscriber keeps order).
    await pub.send(publishBytes(ver, 0x32, topic, 8, "marker"));
    await pub.expect("puback");
    const next = (await sub.expect("publish")) as IPublishPacket;
    expect(next.payload.toString()).toBe("marker");
    await sub.sendPacket({ cmd: "puback", messageId: next.messageId });

    // After PUBCOMP, packet id 7 is free: a new QoS 2 PUBLISH with it is a new message [MQTT-4.3.3-?].
    await pub.send(publishBytes(ver, 0x34, topic, 7, "again"));
    expect(((await pub.expect("pubrec")) as IPubrecPacket).messageId).toBe(7);
    const again = (await sub.expect("publish")) as IPublishPacket;
    expect(again.payload.toString()).toBe("again");
    await pub.send([0x62, 0x02, 0x00, 0x07]);
    await pub.expect("pubcomp");
    expect(pub.isClosed).toBe(false);
    expect(sub.isClosed).toBe(false);
  });

  it("QoS 2 delivery to a QoS 2 subscriber: PUBLISH, PUBREC, PUBREL, PUBCOMP from the broker's side", async () => {
    const topic = `q2s/${ver}`;
    const sub = await RawClient.connected(port, ver, cid("q2sub2"));
    expect(await sub.subscribe(topic, 2)).toBe(2);
    const pub = await RawClient.connected(port, ver, cid("q2pub2"));
    await pub.send(publishBytes(ver, 0x34, topic, 1, "two"));
    await pub.expect("pubrec");
    await pub.send([0x62, 0x02, 0x00, 0x01]);
    await pub.expect("pubcomp");
    const d = (await sub.expect("publish")) as IPublishPacket;
    expect(d.qos).toBe(2);
    expect(d.dup).toBe(false);
    expect(d.payload.toString()).toBe("two");
    await sub.sendPacket({ cmd: "pubrec", messageId: d.messageId });
    const rel = await sub.expect("pubrel");
    expect(rel.messageId).toBe(d.messageId);
    await sub.sendPacket({ cmd: "pubcomp", messageId: d.messageId });
    // Round trip to prove nothing else is pending for the subscriber.
    await sub.send([0xc0, 0x00]);
    await sub.expect("pingresp");
  });
});
