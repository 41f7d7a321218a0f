// 04-malformed: undecodable or oversized input closes that connection, and only that one.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 2.2 (fixed header; packet types 0 and 15 are reserved in 3.1.1; flag
//     bits, MQTT-2.2.2-2), 2.2.3 (Remaining Length: at most four bytes), 3.6.1 (PUBREL flags
//     0010, MQTT-3.6.1-1), 3.14.1 (DISCONNECT flags), 4.8 (protocol violation -> close).
//   MQTT 5.0 (OASIS) 1.5.5 (Variable Byte Integer, at most four bytes), 2.1.3 (flags), 3.1.2.11.4
//     and 3.2.2.3.6 (Maximum Packet Size: a larger packet is a Protocol Error, DISCONNECT 0x95
//     Packet too large), 3.15 and 4.12 (AUTH only after an Authentication Method), 4.13 (Malformed
//     Packet -> DISCONNECT 0x81 may be sent, then close).

import type { IConnackPacket, IPublishPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { expectClosedSilently, expectDisconnect, expectErrorClose } from "./expect-close.ts";
import { connectBytes, destroyAll, frame, gen, RawClient, str, varint } from "./raw-client.ts";

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
const malformed = (): number => node.broker.metrics.get("packets.malformed");

describe.each([4, 5] as const)("04-malformed: framing and packet types (protocol %i)", (ver) => {
  it("Remaining Length with 5 continuation bytes -> closed, packets.malformed counted", async () => {
    const c = await RawClient.connected(port, ver, cid("rl5"));
    const before = malformed();
    await c.send([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f]);
    await expectErrorClose(c, [0x81]);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("Remaining Length with 5 continuation bytes as the very first bytes -> closed, nothing sent", async () => {
    const c = await RawClient.open(port, ver);
    const before = malformed();
    await c.send([0x10, 0x80, 0x80, 0x80, 0x80, 0x01]);
    await c.closed();
    expect(c.bytes().length).toBe(0);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("packet type 0 (reserved) -> closed [MQTT-2.2]", async () => {
    const c = await RawClient.connected(port, ver, cid("type0"));
    const before = malformed();
    await c.send([0x00, 0x00]);
    await expectErrorClose(c, [0x81, 0x82]);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("PUBREL with flags 0000 -> closed [MQTT-3.6.1-1]", async () => {
    const c = await RawClient.connected(port, ver, cid("pubrelflags"));
    const before = malformed();
    await c.send([0x60, 0x02, 0x00, 0x01]);
    await expectErrorClose(c, [0x81]);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("DISCONNECT with a flag bit set -> closed as malformed", async () => {
    const c = await RawClient.connected(port, ver, cid("discflags"));
    const before = malformed();
    await c.send([0xe1, 0x00]);
    await expectErrorClose(c, [0x81]);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("CONNECT whose client id runs past the Remaining Length -> closed without CONNACK", async () => {
    const c = await RawClient.open(port, ver);
    const good = connectBytes(ver, "truncated-client-id");
    const cut = good.subarray(2, good.length - 5); // body minus the client id's last 5 bytes
    await c.send(frame(0x10, cut));
    await c.closed();
    expect(c.bytes().length).toBe(0);
    await by.check();
  });
});

describe("04-malformed: AUTH", () => {
  it("3.1.1: packet type 15 (AUTH does not exist in 3.1.1) -> closed", async () => {
    const c = await RawClient.connected(port, 4, cid("auth311"));
    const before = malformed();
    await c.send([0xf0, 0x00]);
    await expectClosedSilently(c);
    expect(malformed()).toBe(before + 1);
    await by.check();
  });

  it("5.0: AUTH without an Authentication Method in the CONNECT -> DISCONNECT 0x82 [MQTT-4.12.0-?]", async () => {
    const c = await RawClient.connected(port, 5, cid("auth5"));
    await c.send(gen(5, { cmd: "auth", reasonCode: 0x19, properties: { authenticationMethod: "SCRAM-SHA-1" } }));
    await expectDisconnect(c, 0x82);
    await by.check();
  });
});

describe("04-malformed: mqtt.max_packet_size = 1KB", () => {
  let small: TestNode;
  let smallBy: Bystander;
  const LIMIT = 1024;

  beforeAll(async () => {
    small = await startTestNode({ set: { "mqtt.max_packet_size": "1KB" } });
    smallBy = await bystander(small.url);
  });
  afterAll(async () => {
    await smallBy?.end();
    await small?.close();
  });

  /** A QoS 0 PUBLISH whose whole encoding is exactly `total` bytes. */
  function publishOfSize(ver: 4 | 5, topic: string, total: number): Buffer {
    const fixed = (ver === 5 ? 1 : 0) + 2 + Buffer.byteLength(topic);
    // Remaining Length is 2 bytes for 128..16383.
    const payload = Buffer.alloc(total - 3 - fixed, 0x61);
    const b = frame(0x30, [...str(topic), ...(ver === 5 ? [0] : []), ...payload]);
    expect(b.length).toBe(total);
    return b;
  }

  it("5.0 CONNACK announces Maximum Packet Size 1024", async () => {
    const c = await RawClient.open(small.port("tcp"), 5);
    await c.send(connectBytes(5, cid("mps")));
    const ack = (await c.expect("connack")) as IConnackPacket;
    expect(ack.properties?.maximumPacketSize).toBe(LIMIT);
  });

  it.each([4, 5] as const)("protocol %i: a packet of exactly 1024 bytes is accepted", async (ver) => {
    const sub = await RawClient.connected(small.port("tcp"), ver, cid("fitsub"));
    await sub.subscribe(`fit/${ver}`, 0);
    await sub.send(publishOfSize(ver, `fit/${ver}`, LIMIT));
    const p = (await sub.expect("publish")) as IPublishPacket;
    expect(p.topic).toBe(`fit/${ver}`);
  });

  it("5.0: a 2KB PUBLISH -> DISCONNECT 0x95 Packet too large, then close", async () => {
    const c = await RawClient.connected(small.port("tcp"), 5, cid("big5"));
    await c.send(publishOfSize(5, "big/5", 2048));
    await expectDisconnect(c, 0x95);
    await smallBy.check();
  });

  it("3.1.1: a 2KB PUBLISH -> closed, nothing sent", async () => {
    const c = await RawClient.connected(small.port("tcp"), 4, cid("big4"));
    await c.send(publishOfSize(4, "big/4", 2048));
    await expectClosedSilently(c);
    await smallBy.check();
  });

  it.each([4, 5] as const)("protocol %i: 1025 bytes (one over) is refused", async (ver) => {
    const c = await RawClient.connected(small.port("tcp"), ver, cid("over"));
    await c.send(publishOfSize(ver, `over/${ver}`, LIMIT + 1));
    if (ver === 5) await expectDisconnect(c, 0x95);
    else await expectClosedSilently(c);
    await smallBy.check();
  });

  it.each([4, 5] as const)(
    "protocol %i: refused from the fixed header alone (the body is never awaited)",
    async (ver) => {
      const c = await RawClient.connected(small.port("tcp"), ver, cid("hdr"));
      await c.send([0x30, ...varint(1_000_000)]);
      if (ver === 5) await expectDisconnect(c, 0x95);
      else await expectClosedSilently(c);
      await smallBy.check();
    },
  );

  it("an oversized CONNECT is refused before any CONNACK", async () => {
    const c = await RawClient.open(small.port("tcp"), 4);
    await c.send(connectBytes(4, "x".repeat(2000)));
    await c.closed();
    expect(c.bytes().length).toBe(0);
    await smallBy.check();
  });
});
