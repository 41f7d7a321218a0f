// 05-framing: MQTT is a byte stream over TCP; packet boundaries are not write boundaries.
// A packet split over many writes (down to one byte per write, and with the Remaining Length
// itself split) and many packets in one write must both be read exactly as if sent one by one,
// in order; a bad packet in the middle of a write ends the connection at that packet.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 2.2.3 (Remaining Length), 4.2 (network connections: ordered, lossless
//     byte stream), 4.6 (message ordering), 4.8 (protocol violation -> close).
//   MQTT 5.0 (OASIS) 1.5.5 (Variable Byte Integer), 2.1.4, 4.2, 4.6, 4.13.

import type { IPublishPacket, Packet } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { connectBytes, destroyAll, gen, RawClient } from "./raw-client.ts";

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

async function take(c: RawClient, n: number): Promise<Packet[]> {
  const out: Packet[] = [];
  for (let i = 0; i < n; i++) out.push(await c.next());
  return out;
}

describe.each([4, 5] as const)("05-framing (protocol %i)", (ver) => {
  it("CONNECT, SUBSCRIBE, PUBLISH, PINGREQ each written one byte per write", async () => {
    const topic = `bytes/${ver}`;
    const c = await RawClient.open(port, ver);
    await c.sendByteByByte(connectBytes(ver, cid("bytewise")));
    await c.expect("connack");
    await c.sendByteByByte(gen(ver, { cmd: "subscribe", messageId: 3, subscriptions: [{ topic, qos: 1 }] }));
    expect((await c.expect("suback")).messageId).toBe(3);
    const payload = Buffer.alloc(300, 0x5a); // two-byte Remaining Length, split too
    await c.sendByteByByte(
      gen(ver, { cmd: "publish", topic, payload, qos: 1, messageId: 4, dup: false, retain: false }),
    );
    const two = await take(c, 2);
    expect(two.map((p) => p.cmd).sort()).toEqual(["puback", "publish"]);
    const got = two.find((p) => p.cmd === "publish") as IPublishPacket;
    expect(Buffer.from(got.payload).equals(payload)).toBe(true);
    await c.send(gen(ver, { cmd: "puback", messageId: got.messageId }));
    await c.sendByteByByte(Buffer.from([0xc0, 0x00]));
    await c.expect("pingresp");
  });

  it("a PUBLISH split inside its Remaining Length and inside its payload", async () => {
    const topic = `split/${ver}`;
    const sub = await RawClient.connected(port, ver, cid("splitsub"));
    await sub.subscribe(topic, 0);
    const pub = await RawClient.connected(port, ver, cid("splitpub"));
    const bytes = gen(ver, {
      cmd: "publish",
      topic,
      payload: Buffer.alloc(20_000, 0x33),
      qos: 0,
      dup: false,
      retain: false,
    });
    // byte 0 = type, bytes 1..3 = Remaining Length (20_000 needs 3 bytes)
    for (const [a, b] of [
      [0, 2],
      [2, 3],
      [3, 100],
      [100, 10_000],
      [10_000, bytes.length],
    ]) {
      await pub.send(bytes.subarray(a, b));
    }
    const got = (await sub.expect("publish")) as IPublishPacket;
    expect(got.payload.length).toBe(20_000);
  });

  it("CONNECT + SUBSCRIBE + 2 PUBLISH + PINGREQ + DISCONNECT in one write", async () => {
    const topic = `batch/${ver}`;
    const c = await RawClient.open(port, ver);
    await c.send(
      Buffer.concat([
        connectBytes(ver, cid("batch")),
        gen(ver, { cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos: 1 }] }),
        gen(ver, { cmd: "publish", topic, payload: Buffer.from("first"), qos: 0, dup: false, retain: false }),
        gen(ver, {
          cmd: "publish",
          topic,
          payload: Buffer.from("second"),
          qos: 1,
          messageId: 2,
          dup: false,
          retain: false,
        }),
        gen(ver, { cmd: "pingreq" }),
        gen(ver, { cmd: "disconnect" }),
      ]),
    );
    const rest = await c.closed();
    const cmds = rest.map((p) => p.cmd);
    expect(cmds[0]).toBe("connack");
    expect(cmds[1]).toBe("suback");
    const pubs = rest.filter((p) => p.cmd === "publish") as IPublishPacket[];
    // Ordered delivery of one publisher's messages to one subscription [MQTT-4.6.0-?].
    expect(pubs.map((p) => p.payload.toString())).toEqual(["first", "second"]);
    expect(cmds.filter((x) => x === "puback")).toHaveLength(1);
    expect(cmds.at(-1)).toBe("pingresp");
    expect(cmds.indexOf("pingresp")).toBeGreaterThan(cmds.indexOf("puback"));
  });

  it("50 QoS 1 PUBLISHes in one write: 50 PUBACKs in packet-id order", async () => {
    const c = await RawClient.connected(port, ver, cid("fifty"));
    const many = Array.from({ length: 50 }, (_, i) =>
      gen(ver, {
        cmd: "publish",
        topic: `fifty/${ver}`,
        payload: Buffer.from(String(i)),
        qos: 1,
        messageId: i + 1,
        dup: false,
        retain: false,
      }),
    );
    await c.send(Buffer.concat(many));
    const acks = await take(c, 50);
    expect(acks.map((p) => p.messageId)).toEqual(Array.from({ length: 50 }, (_, i) => i + 1));
  });

  it("a malformed packet in the middle of a write: packets before it are answered, none after", async () => {
    const c = await RawClient.open(port, ver);
    const before = node.broker.metrics.get("packets.malformed");
    await c.send(
      Buffer.concat([
        connectBytes(ver, cid("midbad")),
        Buffer.from([0xc0, 0x00]), // PINGREQ
        Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f]), // 5-byte Remaining Length
        Buffer.from([0xc0, 0x00]), // PINGREQ never answered
      ]),
    );
    const rest = await c.closed();
    const cmds = rest.map((p) => p.cmd);
    expect(cmds.slice(0, 2)).toEqual(["connack", "pingresp"]);
    expect(cmds.filter((x) => x === "pingresp")).toHaveLength(1);
    // 5.0 may add a DISCONNECT 0x81 (MQTT 5.0 section 4.13).
    expect(cmds.slice(2)).toEqual(ver === 5 ? ["disconnect"] : []);
    expect(node.broker.metrics.get("packets.malformed")).toBe(before + 1);
    await by.check();
  });

  it("a 256KB PUBLISH in one write reaches a subscriber intact", async () => {
    const topic = `large/${ver}`;
    const sub = await RawClient.connected(port, ver, cid("largesub"));
    await sub.subscribe(topic, 1);
    const pub = await RawClient.connected(port, ver, cid("largepub"));
    const payload = Buffer.alloc(256 * 1024);
    for (let i = 0; i < payload.length; i++) payload[i] = i % 251;
    await pub.send(gen(ver, { cmd: "publish", topic, payload, qos: 1, messageId: 9, dup: false, retain: false }));
    await pub.expect("puback");
    const got = (await sub.expect("publish", 5000)) as IPublishPacket;
    expect(Buffer.from(got.payload).equals(payload)).toBe(true);
  });

  it("bytes.received counts every byte written", async () => {
    const c = await RawClient.open(port, ver);
    const bytes = connectBytes(ver, cid("count"));
    const before = node.broker.metrics.get("bytes.received");
    await c.sendByteByByte(bytes);
    await c.expect("connack");
    // Other tests in this file run serially; the bystander is idle here.
    expect(node.broker.metrics.get("bytes.received") - before).toBe(bytes.length);
  });
});
