// Frame splitting by the fixed header's Remaining Length (MQTT 5.0 section 2.1.4).
import { describe, expect, it } from "vitest";
import {
  connectProtocolLevel,
  FrameReader,
  MALFORMED,
  NEED_MORE,
  TOO_LARGE,
} from "../../src/broker/connection/frame-reader.ts";

describe("FrameReader", () => {
  it("returns whole packets across chunk boundaries and several per chunk", () => {
    const r = new FrameReader(1024);
    const a = Buffer.from([0xc0, 0x00]); // PINGREQ
    const b = Buffer.from([0x30, 0x05, 0x00, 0x01, 0x74, 0x68, 0x69]); // PUBLISH t "hi"
    r.push(Buffer.concat([a, b.subarray(0, 3)]));
    expect(r.next()).toEqual(a);
    expect(r.next()).toBe(NEED_MORE);
    r.push(b.subarray(3, 5));
    expect(r.next()).toBe(NEED_MORE);
    r.push(b.subarray(5));
    expect(r.next()).toEqual(b);
    expect(r.next()).toBe(NEED_MORE);
  });

  it("splits a stream cut at random points into the same packets (frames over several chunks)", () => {
    // 40 PUBLISH packets of about 16 KB and of a few bytes, cut into chunks of 1 byte to 40 KB.
    const packets = Array.from({ length: 40 }, (_, i) => {
      const body = Buffer.alloc(i % 2 === 0 ? 16_000 : 3, i);
      const len = body.length + 3;
      const head = len < 128 ? Buffer.from([0x30, len]) : Buffer.from([0x30, (len & 0x7f) | 0x80, len >> 7]);
      return Buffer.concat([head, Buffer.from([0x00, 0x01, 0x74]), body]);
    });
    const stream = Buffer.concat(packets);
    let seed = 17;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return 1 + (seed % n);
    };
    const r = new FrameReader(1 << 20);
    const out: Buffer[] = [];
    for (let at = 0; at < stream.length; ) {
      const n = Math.min(rand(40_000), stream.length - at);
      r.push(stream.subarray(at, at + n));
      at += n;
      for (let f = r.next(); typeof f !== "number"; f = r.next()) out.push(Buffer.from(f));
    }
    expect(out.length).toBe(packets.length);
    for (const [i, f] of out.entries()) expect(f.equals(packets[i]), `packet ${i}`).toBe(true);
    expect(r.pending).toBe(0);
  });

  it("decodes multi-byte remaining lengths split byte by byte", () => {
    const r = new FrameReader(1 << 20);
    const body = Buffer.alloc(200, 1);
    const pkt = Buffer.concat([Buffer.from([0x30, 0xc8, 0x01]), body]);
    for (const byte of pkt) r.push(Buffer.from([byte]));
    const f = r.next();
    expect(Buffer.isBuffer(f) && f.length).toBe(203);
  });

  it("refuses a packet over the limit from its header", () => {
    const r = new FrameReader(100);
    r.push(Buffer.from([0x30, 0xc8, 0x01]));
    expect(r.next()).toBe(TOO_LARGE);
    expect(r.tooLargeSize).toBe(203);
  });

  it("flags a remaining length longer than four bytes", () => {
    const r = new FrameReader(1 << 30);
    r.push(Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x01]));
    expect(r.next()).toBe(MALFORMED);
  });

  it("reads the protocol level of a CONNECT", () => {
    const v4 = Buffer.from([0x10, 0x0c, 0x00, 0x04, 0x4d, 0x51, 0x54, 0x54, 0x04, 0x02, 0x00, 0x3c, 0x00, 0x00]);
    expect(connectProtocolLevel(v4)).toBe(4);
    const v3 = Buffer.from([0x10, 0x0e, 0x00, 0x06, 0x4d, 0x51, 0x49, 0x73, 0x64, 0x70, 0x03, 0x02, 0x00, 0x3c]);
    expect(connectProtocolLevel(v3)).toBe(3);
  });
});
