// The message path's PUBLISH decoder (src/mqtt/fast-codec.ts) against mqtt-packet (the reference):
// for seeded random PUBLISH frames of 3.1.1 and 5.0 (without properties) it reads the same topic,
// flags, packet id and payload; a small payload is a copy that no longer shares the frame's
// memory, a large one a view of it. The plain DISCONNECT reads as mqtt-packet reads it. The 3.x
// CONNACK encoder writes mqtt-packet's bytes.

import mqttPacket from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { decodeFrame } from "../../src/mqtt/codec.ts";
import { decodeFast, encodeConnackV3 } from "../../src/mqtt/fast-codec.ts";
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
