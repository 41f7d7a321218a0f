// The hand-written SUBSCRIBE/UNSUBSCRIBE reader and SUBACK/UNSUBACK writer (src/mqtt/subscribe-codec.ts)
// against mqtt-packet (the reference): seeded random packets of 3.1.1 and 5.0 read the same; on
// mangled frames the fast path answers what mqtt-packet answers or leaves the frame to it (never
// accepts what mqtt-packet refuses); forms it does not read (properties, bad flags) go to
// mqtt-packet; the acknowledgements are mqtt-packet's bytes, also past 127 codes (a two-byte
// remaining length).

import mqttPacket from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { decodeFrame } from "../../src/mqtt/codec.ts";
import { decodeFast, MALFORMED_FRAME } from "../../src/mqtt/fast-codec.ts";
import { encodeSuback, encodeUnsuback } from "../../src/mqtt/subscribe-codec.ts";
import { mulberry32 } from "../helpers/prng.ts";

const PIECES = ["a", "sensor", "+", "#", "é", "温度", "🚀", "$share", "x/y", ""];

function filterOf(r: () => number): string {
  const n = 1 + Math.floor(r() * 4);
  return Array.from({ length: n }, () => PIECES[Math.floor(r() * PIECES.length)]).join("/");
}

function subscribeFrame(r: () => number, v: 4 | 5): Buffer {
  const int = (n: number) => Math.floor(r() * n);
  const subscriptions = Array.from({ length: 1 + int(r() < 0.1 ? 150 : 4) }, () =>
    v === 5
      ? { topic: filterOf(r), qos: int(3) as 0 | 1 | 2, nl: r() < 0.5, rap: r() < 0.5, rh: int(3) }
      : { topic: filterOf(r), qos: int(3) as 0 | 1 | 2 },
  );
  return mqttPacket.generate({ cmd: "subscribe", messageId: int(0x10000), subscriptions }, { protocolVersion: v });
}

function unsubscribeFrame(r: () => number, v: 4 | 5): Buffer {
  const unsubscriptions = Array.from({ length: 1 + Math.floor(r() * 4) }, () => filterOf(r));
  return mqttPacket.generate(
    { cmd: "unsubscribe", messageId: Math.floor(r() * 0x10000), unsubscriptions },
    { protocolVersion: v },
  );
}

type Read = mqttPacket.ISubscribePacket | mqttPacket.IUnsubscribePacket;

function shape(p: Read): unknown {
  return p.cmd === "subscribe"
    ? [p.cmd, p.messageId, p.subscriptions, p.properties]
    : [p.cmd, p.messageId, p.unsubscriptions, p.properties];
}

const makers = [subscribeFrame, unsubscribeFrame];

describe("decodeFast: SUBSCRIBE and UNSUBSCRIBE", () => {
  it("reads what mqtt-packet reads for 2,000 random packets of 3.1.1 and 5.0", () => {
    const r = mulberry32(20261130);
    for (let i = 0; i < 500; i++) {
      for (const make of makers) {
        for (const v of [4, 5] as const) {
          const frame = make(r, v);
          const ours = decodeFast(frame, v) as Read | null;
          expect(ours, `frame ${i}: ${frame.toString("hex")}`).not.toBeNull();
          expect(shape(ours as Read), `frame ${i}`).toEqual(shape(decodeFrame(frame, v) as Read));
        }
      }
    }
  });

  it("on mangled frames answers what mqtt-packet answers, or leaves the frame to it", () => {
    const r = mulberry32(11);
    let read = 0;
    let refused = 0;
    for (let i = 0; i < 6000; i++) {
      const v = r() < 0.5 ? 4 : 5;
      const frame = Buffer.from(makers[i % 2](r, v));
      // One or two bytes after the fixed header: packet id, property length, filter lengths, options.
      for (let k = 1 + Math.floor(r() * 2); k > 0; k--) {
        const at = 2 + Math.floor(r() * (frame.length - 2));
        frame[at] = r() < 0.5 ? Math.floor(r() * 256) : frame[at] ^ (1 << Math.floor(r() * 8));
      }
      const ours = decodeFast(frame, v);
      expect(ours).not.toBe(MALFORMED_FRAME);
      const ref = decodeFrame(frame, v);
      if (ref instanceof Error) refused++;
      if (ours === null) continue;
      expect(ref, `frame ${i}: ${frame.toString("hex")}`).not.toBeInstanceOf(Error);
      expect(shape(ours as Read), `frame ${i}: ${frame.toString("hex")}`).toEqual(shape(ref as Read));
      read++;
    }
    expect(read).toBeGreaterThan(1500);
    expect(refused).toBeGreaterThan(500);
  });

  it("leaves 5.0 properties, reserved header flags and an empty payload to mqtt-packet", () => {
    const frames = [
      mqttPacket.generate(
        {
          cmd: "subscribe",
          messageId: 1,
          subscriptions: [{ topic: "t", qos: 1, nl: false, rap: false, rh: 0 }],
          properties: { subscriptionIdentifier: 7 },
        },
        { protocolVersion: 5 },
      ),
      mqttPacket.generate(
        { cmd: "unsubscribe", messageId: 1, unsubscriptions: ["t"], properties: { userProperties: { a: "b" } } },
        { protocolVersion: 5 },
      ),
    ];
    for (const f of frames) {
      expect(decodeFast(f, 5), f.toString("hex")).toBeNull();
      expect(decodeFrame(f, 5)).not.toBeInstanceOf(Error);
    }
    // SUBSCRIBE with header flags 0000 and 0011; a SUBSCRIBE and an UNSUBSCRIBE with a packet id only.
    for (const bytes of [
      [0x80, 0x06, 0, 1, 0, 1, 0x74, 0],
      [0x83, 0x06, 0, 1, 0, 1, 0x74, 0],
      [0x82, 0x02, 0, 1],
      [0xa2, 0x02, 0, 1],
    ]) {
      expect(decodeFast(Buffer.from(bytes), 4), Buffer.from(bytes).toString("hex")).toBeNull();
    }
  });
});

describe("encodeSuback and encodeUnsuback", () => {
  it("write mqtt-packet's bytes for 3.1.1 and 5.0, up to 300 codes", () => {
    const r = mulberry32(3);
    const v3codes = [0, 1, 2, 0x80];
    const v5codes = [0, 1, 2, 0x11, 0x80, 0x83, 0x87, 0x8f, 0x91, 0x97, 0x9e, 0xa1, 0xa2];
    for (const n of [1, 2, 5, 124, 125, 126, 127, 128, 300]) {
      for (const v of [4, 5] as const) {
        const pool = v === 5 ? v5codes : v3codes;
        const codes = Array.from({ length: n }, () => pool[Math.floor(r() * pool.length)]);
        const messageId = 1 + Math.floor(r() * 0xfffe);
        const opts = { protocolVersion: v };
        expect(encodeSuback(messageId, codes, v === 5), `suback ${n} v${v}`).toEqual(
          mqttPacket.generate({ cmd: "suback", messageId, granted: codes }, opts),
        );
        const unsuback =
          v === 5 ? { cmd: "unsuback" as const, messageId, granted: codes } : { cmd: "unsuback" as const, messageId };
        expect(encodeUnsuback(messageId, codes, v === 5), `unsuback ${n} v${v}`).toEqual(
          mqttPacket.generate(unsuback as mqttPacket.IUnsubackPacket, opts),
        );
      }
    }
  });
});
