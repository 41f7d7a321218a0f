// The message path's PUBLISH decoder (src/mqtt/fast-codec.ts) against mqtt-packet (the reference):
// for seeded random PUBLISH frames of 3.1.1 and 5.0 it reads the same topic, flags, packet id,
// payload and 5.0 properties (and on mangled 5.0 frames it reads what mqtt-packet reads, or leaves
// the frame to it); a small payload is a copy that no longer shares the frame's
// memory, a large one a view of it. The plain DISCONNECT reads as mqtt-packet reads it. The 3.x
// CONNACK encoder writes mqtt-packet's bytes.

import mqttPacket from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { decodeFrame } from "../../src/mqtt/codec.ts";
import { decodeFast, encodeConnackV3, MALFORMED_FRAME } from "../../src/mqtt/fast-codec.ts";
import { mulberry32 } from "../helpers/prng.ts";

const PIECES = ["a", "sensor", "é", "温度", "🚀", "x/y"];
const SIZES = [0, 1, 64, 127, 128, 4095, 4096, 70_000];

function publishFrame(r: () => number, v5: boolean): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const qos = int(3) as 0 | 1 | 2;
  return mqttPacket.generate(
    {
      cmd: "publish",
      topic: Array.from({ length: 1 + int(4) }, () => pick(PIECES)).join("/"),
      payload: Buffer.from(Array.from({ length: pick(SIZES) }, () => int(256))),
      qos,
      dup: qos > 0 && r() < 0.3,
      retain: r() < 0.5,
      messageId: qos > 0 ? 1 + int(0xfffe) : undefined,
    },
    { protocolVersion: v5 ? 5 : 4 },
  );
}

describe("decodeFast: PUBLISH", () => {
  it("reads what mqtt-packet reads for 1,000 random frames of 3.1.1 and 5.0", () => {
    const r = mulberry32(20261122);
    for (let i = 0; i < 1000; i++) {
      for (const v5 of [false, true]) {
        const frame = publishFrame(r, v5);
        const ours = decodeFast(frame, v5 ? 5 : 4) as mqttPacket.IPublishPacket;
        const ref = decodeFrame(frame, v5 ? 5 : 4) as mqttPacket.IPublishPacket;
        expect(ours.topic, `frame ${i}`).toBe(ref.topic);
        expect([ours.qos, ours.dup, ours.retain, ours.messageId]).toEqual([
          ref.qos,
          ref.dup,
          ref.retain,
          ref.messageId,
        ]);
        expect(Buffer.from(ours.payload).equals(Buffer.from(ref.payload)), `frame ${i}`).toBe(true);
      }
    }
  });

  it("copies a small payload out of the frame and keeps a large one as a view", () => {
    const frameOf = (size: number) =>
      mqttPacket.generate(
        { cmd: "publish", topic: "t", payload: Buffer.alloc(size, 7), qos: 0, dup: false, retain: false },
        { protocolVersion: 4 },
      );
    const small = frameOf(100);
    const p = decodeFast(small, 4) as mqttPacket.IPublishPacket;
    small.fill(0);
    expect(Buffer.from(p.payload).equals(Buffer.alloc(100, 7))).toBe(true);
    const large = frameOf(5000);
    const q = decodeFast(large, 4) as mqttPacket.IPublishPacket;
    large.fill(0, large.length - 5000);
    expect(Buffer.from(q.payload).equals(Buffer.alloc(5000, 0))).toBe(true);
  });
});

const NAMES = ["k", "region", "", "é", "trace-id"];

/** Random 5.0 PUBLISH properties, as mqtt-packet encodes them (User Properties may repeat a name). */
function randomProperties(r: () => number): Record<string, unknown> {
  const int = (n: number) => Math.floor(r() * n);
  const props: Record<string, unknown> = {};
  if (r() < 0.4) props.payloadFormatIndicator = r() < 0.5;
  if (r() < 0.4) props.messageExpiryInterval = int(0x100000000);
  if (r() < 0.3) props.topicAlias = 1 + int(0xfffe);
  if (r() < 0.3) props.responseTopic = `reply/${int(1000)}/é`;
  if (r() < 0.3) props.correlationData = Buffer.from(Array.from({ length: int(40) }, () => int(256)));
  if (r() < 0.3) props.contentType = r() < 0.5 ? "application/json" : "";
  if (r() < 0.5) {
    const user: Record<string, string | string[]> = {};
    for (let k = int(4); k >= 0; k--) {
      const name = NAMES[int(NAMES.length)];
      user[name] = r() < 0.3 ? [`v${int(9)}`, `w${int(9)}`, ""] : `v${int(99)}`;
    }
    props.userProperties = user;
  }
  return props;
}

function v5Frame(r: () => number): Buffer {
  const qos = Math.floor(r() * 3) as 0 | 1 | 2;
  return mqttPacket.generate(
    {
      cmd: "publish",
      topic: `t/${Math.floor(r() * 100)}`,
      payload: Buffer.alloc(Math.floor(r() * 200), 9),
      qos,
      dup: false,
      retain: r() < 0.5,
      messageId: qos > 0 ? 1 + Math.floor(r() * 0xfffe) : undefined,
      properties: randomProperties(r),
    } as mqttPacket.IPublishPacket,
    { protocolVersion: 5 },
  );
}

/** What a decoded PUBLISH carries, Buffers as plain arrays and property objects key-sorted. */
function shape(p: mqttPacket.IPublishPacket): unknown {
  const props = p.properties as Record<string, unknown> | undefined;
  const norm = (v: unknown): unknown =>
    Buffer.isBuffer(v)
      ? [...v]
      : v !== null && typeof v === "object" && !Array.isArray(v)
        ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : 1)))
        : v;
  return {
    topic: p.topic,
    qos: p.qos,
    retain: p.retain,
    messageId: p.messageId,
    payload: [...Buffer.from(p.payload)],
    properties:
      props === undefined ? undefined : norm(Object.fromEntries(Object.entries(props).map(([k, v]) => [k, norm(v)]))),
  };
}

describe("decodeFast: 5.0 PUBLISH properties", () => {
  it("reads what mqtt-packet reads for 2,000 random frames with properties", () => {
    const r = mulberry32(20261129);
    let withProps = 0;
    for (let i = 0; i < 2000; i++) {
      const frame = v5Frame(r);
      const ours = decodeFast(frame, 5) as mqttPacket.IPublishPacket;
      const ref = decodeFrame(frame, 5) as mqttPacket.IPublishPacket;
      expect(ours, `frame ${i} left to the general codec`).not.toBeNull();
      expect(shape(ours), `frame ${i}`).toEqual(shape(ref));
      if (ref.properties !== undefined) withProps++;
    }
    expect(withProps).toBeGreaterThan(1500);
  });

  it("on mangled frames answers what mqtt-packet answers, or leaves the frame to it", () => {
    const r = mulberry32(7);
    let read = 0;
    for (let i = 0; i < 5000; i++) {
      const frame = Buffer.from(v5Frame(r));
      // Change one or two bytes after the fixed header and the topic (packet id, properties, payload).
      for (let k = 1 + Math.floor(r() * 2); k > 0; k--) {
        frame[Math.min(frame.length - 1, 7 + Math.floor(r() * 40))] = Math.floor(r() * 256);
      }
      const ours = decodeFast(frame, 5);
      if (ours === null || ours === MALFORMED_FRAME) continue;
      const ref = decodeFrame(frame, 5);
      expect(ref, `frame ${i}: ${frame.toString("hex")}`).not.toBeInstanceOf(Error);
      expect(shape(ours as mqttPacket.IPublishPacket), `frame ${i}: ${frame.toString("hex")}`).toEqual(
        shape(ref as mqttPacket.IPublishPacket),
      );
      read++;
    }
    expect(read).toBeGreaterThan(1000);
  });

  it("leaves a Subscription Identifier, a property PUBLISH does not carry and a repeated one to mqtt-packet", () => {
    const frames = [{ subscriptionIdentifier: 5 }, { sessionExpiryInterval: 10 }].map((properties) =>
      mqttPacket.generate(
        { cmd: "publish", topic: "t", payload: Buffer.from("x"), qos: 0, dup: false, retain: false, properties },
        { protocolVersion: 5 },
      ),
    );
    // Message Expiry Interval twice: property length 10, two 0x02 properties, then the payload.
    frames.push(Buffer.from([0x30, 0x0f, 0, 1, 0x74, 10, 2, 0, 0, 0, 1, 2, 0, 0, 0, 2, 0x78]));
    for (const f of frames) expect(decodeFast(f, 5), f.toString("hex")).toBeNull();
  });
});

describe("decodeFast: DISCONNECT", () => {
  it("reads the plain DISCONNECT as mqtt-packet does and leaves every other form to it", () => {
    for (const ver of [3, 4, 5]) {
      const plain = Buffer.from([0xe0, 0x00]);
      const ours = decodeFast(plain, ver) as mqttPacket.IDisconnectPacket;
      const ref = decodeFrame(plain, ver) as mqttPacket.IDisconnectPacket;
      expect([ours.cmd, ours.reasonCode, ours.properties]).toEqual([ref.cmd, ref.reasonCode, ref.properties]);
      // A reason code, a reason code with properties, reserved header flags.
      for (const other of [
        [0xe0, 0x01, 0x04],
        [0xe0, 0x02, 0x00, 0x00],
        [0xe1, 0x00],
      ]) {
        expect(decodeFast(Buffer.from(other), ver), `${other} at ${ver}`).toBeNull();
      }
    }
  });
});

describe("encodeConnackV3", () => {
  it("writes mqtt-packet's bytes for every 3.1 and 3.1.1 return code, with and without session present", () => {
    for (const protocolVersion of [3, 4]) {
      for (const sessionPresent of [false, true]) {
        for (let returnCode = 0; returnCode <= 5; returnCode++) {
          const want = mqttPacket.generate({ cmd: "connack", returnCode, sessionPresent }, { protocolVersion });
          expect(encodeConnackV3(sessionPresent, returnCode)).toEqual(want);
        }
      }
    }
  });
});
