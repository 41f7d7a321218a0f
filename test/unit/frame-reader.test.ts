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
