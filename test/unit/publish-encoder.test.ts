// The message path's PUBLISH encoder against mqtt-packet (the reference): for seeded random
// packets of both protocol versions (topics with multi-byte characters, payloads across the
// remaining-length boundaries, every PUBLISH property in random order and combination) the bytes
// are identical; the header-only form plus the payload is the whole packet; a traced delivery's
// traceparent is the last property, in place of the message's trace context; what it does not
// write answers null.

import mqttPacket, { type IPublishPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { encodePublish, type PublishFields } from "../../src/mqtt/publish-encoder.ts";
import { mulberry32 } from "../helpers/prng.ts";

const PIECES = ["a", "sensor", "é", "温度", "🚀", "x/y", "", "+", "#"];
const SIZES = [0, 1, 100, 127, 128, 16_383, 16_384, 70_000];

function randomPacket(r: () => number): PublishFields {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const topic = Array.from({ length: 1 + int(4) }, () => pick(PIECES)).join("/");
  const qos = int(3);
  const props: Record<string, unknown> = {};
  const candidates: [string, () => unknown][] = [
    ["payloadFormatIndicator", () => r() < 0.5],
    ["messageExpiryInterval", () => int(0xffffffff)],
    ["topicAlias", () => 1 + int(0xfffe)],
    ["responseTopic", () => `reply/${pick(PIECES)}`],
    ["correlationData", () => Buffer.from(Array.from({ length: int(40) }, () => int(256)))],
    ["userProperties", () => ({ a: "1", [pick(PIECES) || "k"]: r() < 0.5 ? "v" : ["v1", "温"], traceparent: "x" })],
    ["subscriptionIdentifier", () => (r() < 0.5 ? 1 + int(0x0ffffffe) : [1, 200, 20_000, 3_000_000])],
    ["contentType", () => pick(["application/json", "text/plain; charset=utf-8", ""])],
  ];
  for (const [k, v] of candidates.sort(() => r() - 0.5)) if (r() < 0.5) props[k] = v();
  return {
    topic,
    payload: Buffer.alloc(pick(SIZES), int(256)),
    qos,
    retain: r() < 0.5,
    dup: qos > 0 && r() < 0.3,
    pid: qos > 0 ? 1 + int(0xfffe) : 0,
    properties: Object.keys(props).length > 0 ? props : undefined,
  };
}

function reference(p: PublishFields, v5: boolean): Buffer {
  const packet: IPublishPacket = {
    cmd: "publish",
    topic: p.topic,
    payload: p.payload,
    qos: p.qos as 0 | 1 | 2,
    dup: p.dup,
    retain: p.retain,
    messageId: p.qos > 0 ? p.pid : undefined,
  };
  if (v5 && p.properties !== undefined) packet.properties = p.properties as IPublishPacket["properties"];
  return mqttPacket.generate(packet, { protocolVersion: v5 ? 5 : 4 });
}

/** The 5.0 PUBLISH `bytes` hold, as mqtt-packet parses it. */
function parse(bytes: Buffer): IPublishPacket {
  const parser = mqttPacket.parser({ protocolVersion: 5 });
  let got: IPublishPacket | undefined;
  parser.on("packet", (x) => {
    got = x as IPublishPacket;
  });
  parser.parse(bytes);
  if (got === undefined) throw new Error("no packet parsed");
  return got;
}

describe("encodePublish", () => {
  it("writes mqtt-packet's bytes for 2,000 random packets of 3.1.1 and 5.0", () => {
    const r = mulberry32(20261121);
    for (let i = 0; i < 2000; i++) {
      const p = randomPacket(r);
      for (const v5 of [false, true]) {
        const ours = encodePublish(p, v5);
        expect(ours, `packet ${i} v5=${v5}`).not.toBeNull();
        expect((ours as Buffer).equals(reference(p, v5)), `packet ${i} v5=${v5}: ${JSON.stringify(p.properties)}`).toBe(
          true,
        );
      }
    }
  });

  it("header-only bytes followed by the payload are the whole packet", () => {
    const r = mulberry32(7);
    for (let i = 0; i < 200; i++) {
      const p = randomPacket(r);
      const head = encodePublish(p, true, true) as Buffer;
      expect(Buffer.concat([head, p.payload]).equals(encodePublish(p, true) as Buffer)).toBe(true);
    }
  });

  it("the result parses back with mqtt-packet", () => {
    const p: PublishFields = {
      topic: "t/温",
      payload: Buffer.from("hi"),
      qos: 1,
      retain: true,
      dup: true,
      pid: 513,
      properties: { userProperties: { k: ["a", "b"] }, contentType: "text/plain" },
    };
    expect(parse(encodePublish(p, true) as Buffer)).toMatchObject({
      cmd: "publish",
      topic: "t/温",
      qos: 1,
      retain: true,
      dup: true,
      messageId: 513,
      properties: { userProperties: { k: ["a", "b"] }, contentType: "text/plain" },
    });
  });

  it("writes a traceparent last, in place of the message's traceparent and tracestate", () => {
    const r = mulberry32(55);
    const tp = `00-${"4bf92f3577b34da6a3ce929d0e0e4736"}-${"00f067aa0ba902b7"}-01`;
    for (let i = 0; i < 300; i++) {
      const p = randomPacket(r);
      const up = p.properties?.userProperties as Record<string, unknown> | undefined;
      if (up !== undefined && r() < 0.5) up.tracestate = "k=v";
      const bytes = encodePublish(p, true, false, tp) as Buffer;
      const end = bytes.length - p.payload.length;
      expect(bytes.subarray(end - tp.length, end).toString("latin1")).toBe(tp);
      const got = parse(bytes);
      const { traceparent: _p, tracestate: _s, ...kept } = up ?? {};
      expect(got.properties).toEqual({ ...p.properties, userProperties: { ...kept, traceparent: tp } });
      expect(Object.keys(got.properties?.userProperties ?? {}).at(-1)).toBe("traceparent");
      expect(Buffer.from(got.payload).equals(p.payload)).toBe(true);
    }
    const base: PublishFields = { topic: "t", payload: Buffer.alloc(0), qos: 0, retain: false, dup: false, pid: 0 };
    expect(encodePublish(base, true, false, "00-short")).toBeNull();
    // 3.x carries no properties, so no traceparent either.
    expect((encodePublish(base, false, false, tp) as Buffer).equals(encodePublish(base, false) as Buffer)).toBe(true);
  });

  it("answers null for what it does not write", () => {
    const base: PublishFields = { topic: "t", payload: Buffer.alloc(0), qos: 0, retain: false, dup: false, pid: 0 };
    expect(encodePublish({ ...base, properties: { reasonString: "x" } }, true)).toBeNull();
    expect(encodePublish({ ...base, properties: { topicAlias: 70_000 } }, true)).toBeNull();
    expect(encodePublish({ ...base, properties: { userProperties: { k: 1 } } }, true)).toBeNull();
    // A string or binary field beyond its 16-bit length prefix.
    const long = "x".repeat(70_000);
    expect(encodePublish({ ...base, topic: long }, false)).toBeNull();
    expect(encodePublish({ ...base, topic: "é".repeat(40_000) }, true)).toBeNull();
    expect(encodePublish({ ...base, properties: { userProperties: { k: long } } }, true)).toBeNull();
    expect(encodePublish({ ...base, properties: { contentType: long } }, true)).toBeNull();
    expect(encodePublish({ ...base, properties: { correlationData: Buffer.alloc(70_000) } }, true)).toBeNull();
    // 3.x ignores properties altogether.
    expect(encodePublish({ ...base, properties: { reasonString: "x" } }, false)).not.toBeNull();
  });
});
