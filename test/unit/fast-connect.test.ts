// The hand-written CONNECT decoder against mqtt-packet (the general codec, the reference): for
// seeded random CONNECTs of the three protocol levels (client ids with multi-byte characters, wills,
// user names and passwords in every combination) it gives the same packet, and for 5.0 CONNECTs
// with properties it declines (null); for mangled frames it never accepts what mqtt-packet refuses
// or reads differently. Also: a CONNECT decoded by the general codec leaves its shared parsers as
// they were for every other connection.

import mqttPacket, { type IConnectPacket, type Packet } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { decodeFrame } from "../../src/mqtt/codec.ts";
import { decodeConnect } from "../../src/mqtt/fast-connect.ts";
import { mulberry32 } from "../helpers/prng.ts";
import { frame as wholeFrame } from "../raw/raw-client.ts";

const IDS = ["", "c", "client-1", "温度计", "🚀x", "a".repeat(300)];

function randomConnect(r: () => number, withProps: boolean): IConnectPacket {
  const int = (n: number) => Math.floor(r() * n);
  const pick = <T>(xs: readonly T[]): T => xs[int(xs.length)];
  const level = pick([3, 4, 5] as const);
  const p: IConnectPacket = {
    cmd: "connect",
    protocolId: level === 3 ? "MQIsdp" : "MQTT",
    protocolVersion: level,
    clean: r() < 0.5,
    keepalive: int(0x10000),
    clientId: level === 3 ? pick(IDS) || "c3" : pick(IDS), // 3.1 requires one to encode
  };
  if (p.clientId === "") p.clean = true; // (the encoder's rule)
  if (r() < 0.5) {
    p.will = {
      topic: pick(["w", "last/will", "温/度"]),
      payload: Buffer.alloc(pick([0, 1, 200, 65_535]), int(256)),
      qos: int(3) as 0 | 1 | 2,
      retain: r() < 0.5,
    };
    if (level === 5 && withProps && r() < 0.5) p.will.properties = { willDelayInterval: int(100) };
  }
  if (r() < 0.6) p.username = pick(["u", "", "用户"]);
  // (The encoder writes a password only after a user name; mangled flags give the other forms.)
  if (p.username !== undefined && r() < 0.6) p.password = Buffer.from(pick(["secret", "", "pässwörd"]));
  if (level === 5 && withProps) p.properties = { sessionExpiryInterval: int(1000), receiveMaximum: 1 + int(100) };
  return p;
}

const frameOf = (p: IConnectPacket): Buffer => mqttPacket.generate(p, { protocolVersion: p.protocolVersion });

function bodyOf(frame: Buffer): Buffer {
  let i = 1;
  while ((frame[i] & 0x80) !== 0) i++;
  return frame.subarray(i + 1);
}

describe("decodeConnect", () => {
  it("gives mqtt-packet's packet for 2,000 random common CONNECTs of 3.1, 3.1.1 and 5.0", () => {
    const r = mulberry32(11);
    for (let n = 0; n < 2000; n++) {
      const frame = frameOf(randomConnect(r, false));
      const fast = decodeConnect(frame);
      const ref = decodeFrame(frame, 0);
      expect(ref).not.toBeInstanceOf(Error);
      expect(fast).not.toBeNull();
      expect(fast).toEqual(ref);
    }
  });

  it("declines 5.0 CONNECTs with properties or will properties (the general codec reads them)", () => {
    const r = mulberry32(12);
    let declined = 0;
    for (let n = 0; n < 500; n++) {
      const p = randomConnect(r, true);
      const fast = decodeConnect(frameOf(p));
      if (p.properties !== undefined || p.will?.properties !== undefined) {
        expect(fast).toBeNull();
        declined++;
      } else expect(fast).toEqual(decodeFrame(frameOf(p), 0));
    }
    expect(declined).toBeGreaterThan(100);
  });

  it("never accepts a mangled frame that mqtt-packet refuses or reads differently", () => {
    const r = mulberry32(13);
    const int = (n: number) => Math.floor(r() * n);
    let accepted = 0;
    let refused = 0;
    for (let n = 0; n < 5000; n++) {
      const body = Buffer.from(bodyOf(frameOf(randomConnect(r, r() < 0.3))));
      let mangled: Buffer;
      const how = int(4);
      if (how === 0 && body.length > 0)
        mangled = body.subarray(0, int(body.length)); // truncated
      else if (how === 1)
        mangled = Buffer.concat([body, Buffer.from([int(256)])]); // trailing byte
      else {
        for (let k = 1 + int(3); k > 0; k--) body[int(Math.min(body.length, 40))] = int(256); // bytes near the head
        mangled = body;
      }
      const first = r() < 0.9 ? 0x10 : 0x10 | (1 + int(15));
      const frame = wholeFrame(first, mangled);
      const fast = decodeConnect(frame);
      const ref = decodeFrame(frame, 0);
      if (ref instanceof Error) refused++;
      if (fast === null) continue;
      accepted++;
      expect(ref).not.toBeInstanceOf(Error);
      expect(fast).toEqual(ref);
    }
    // Both kinds occur: the comparison above ran on frames either way.
    expect(accepted).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(200);
  });

  it("declines what is not a CONNECT", () => {
    const sub = mqttPacket.generate({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic: "a", qos: 0 }] });
    expect(decodeConnect(sub)).toBeNull();
    expect(decodeConnect(Buffer.from([0x10, 0x00]))).toBeNull();
  });

  it("copies the will payload and the password out of the frame", () => {
    const frame = frameOf({
      cmd: "connect",
      protocolId: "MQTT",
      protocolVersion: 4,
      clean: true,
      keepalive: 60,
      clientId: "c",
      will: { topic: "w", payload: Buffer.from("bye"), qos: 1, retain: false },
      username: "u",
      password: Buffer.from("pw"),
    });
    const p = decodeConnect(frame) as IConnectPacket;
    frame.fill(0);
    expect(p.will?.payload.toString()).toBe("bye");
    expect(p.password?.toString()).toBe("pw");
  });
});

describe("decodeFrame: a CONNECT leaves the shared parsers as they were", () => {
  it("a 3.1.1 CONNECT decoded after CONNACK does not make the 5.0 parser read 3.1.1", () => {
    const connect311 = frameOf({ cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clientId: "x", keepalive: 0 });
    // A client's second CONNECT (a protocol error the channel answers) goes to its level's parser.
    expect(decodeFrame(connect311, 5)).toMatchObject({ cmd: "connect", protocolVersion: 4 });
    const sub = mqttPacket.generate(
      {
        cmd: "subscribe",
        messageId: 7,
        subscriptions: [{ topic: "t", qos: 1 }],
        properties: { subscriptionIdentifier: 42 },
      },
      { protocolVersion: 5 },
    );
    const p = decodeFrame(sub, 5) as Packet;
    expect(p).toMatchObject({ cmd: "subscribe", messageId: 7, properties: { subscriptionIdentifier: 42 } });
  });
});
