// 01-connect: the CONNECT packet at the byte level, over a plain TCP socket.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 3.1 CONNECT: 3.1.0-1 (first packet is CONNECT), 3.1.0-2 (second CONNECT is
//     a protocol violation), 3.1.2-1 (protocol name), 3.1.2-2 (unsupported level -> CONNACK 0x01),
//     3.1.2-3 (reserved flag), 3.1.2-13/15 (will QoS / will retain without will flag),
//     3.1.2-22 (password without user name), 3.1.3-8 (empty client id without clean session);
//     3.2.2 CONNACK (return codes, fixed 4-byte form); 4.8 (protocol violation -> close).
//   MQTT 3.1 (IBM): protocol name "MQIsdp", level 3.
//   MQTT 5.0 (OASIS) 3.1.2.1/3.1.2.2 (protocol name / version, CONNACK 0x84), 3.1.2.3
//     [MQTT-3.1.2-3], 3.2.2.2 CONNACK reason codes, 4.13 (errors: DISCONNECT 0x82 when connected).

import type { IConnackPacket, IDisconnectPacket, IPublishPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { connectBytes, destroyAll, frame, gen, handConnect, RawClient, str } from "./raw-client.ts";

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

const CONNACK_V3_UNACCEPTABLE_PROTOCOL = [0x20, 0x02, 0x00, 0x01];

describe("01-connect: protocol level", () => {
  it.each([6, 2, 0, 127])("level %i -> CONNACK return code 1, then close [MQTT-3.1.2-2]", async (level) => {
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQTT", level, clientId: `lvl-${level}` }));
    await c.closed();
    expect([...c.bytes()]).toEqual(CONNACK_V3_UNACCEPTABLE_PROTOCOL);
    await by.check();
  });

  it("level 6 with a 5.0-shaped body is refused the same way", async () => {
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQTT", level: 6, clientId: "lvl-6p", props: true }));
    await c.closed();
    expect([...c.bytes()]).toEqual(CONNACK_V3_UNACCEPTABLE_PROTOCOL);
    await by.check();
  });

  it("the refusal counts a CONNACK error", async () => {
    const before = node.broker.metrics.get("packets.connack.error");
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQTT", level: 6, clientId: "lvl-6m" }));
    await c.closed();
    expect(node.broker.metrics.get("packets.connack.error")).toBe(before + 1);
  });
});

describe("01-connect: protocol name", () => {
  it('"MQIsdp" at level 4 (3.1.1) -> CONNACK return code 1, then close [MQTT-3.1.2-1]', async () => {
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQIsdp", level: 4, clientId: "name-4" }));
    await c.closed();
    expect([...c.bytes()]).toEqual(CONNACK_V3_UNACCEPTABLE_PROTOCOL);
    await by.check();
  });

  it('"MQTT" at level 3 (3.1) -> CONNACK return code 1, then close', async () => {
    const c = await RawClient.open(port, 3);
    await c.send(handConnect({ name: "MQTT", level: 3, clientId: "name-3" }));
    await c.closed();
    expect([...c.bytes()]).toEqual(CONNACK_V3_UNACCEPTABLE_PROTOCOL);
    await by.check();
  });

  it('"MQIsdp" at level 5 -> CONNACK reason 0x84 Unsupported Protocol Version, then close', async () => {
    const c = await RawClient.open(port, 5);
    await c.send(handConnect({ name: "MQIsdp", level: 5, clientId: "name-5" }));
    const rest = await c.closed();
    expect(rest).toHaveLength(1);
    const ack = rest[0] as IConnackPacket;
    expect(ack.cmd).toBe("connack");
    expect(ack.reasonCode).toBe(0x84);
    expect(ack.sessionPresent).toBe(false);
    await by.check();
  });

  it.each([4, 5] as const)(
    'an unknown protocol name ("MQTX", level %i) is never accepted [MQTT-3.1.2-1]',
    async (level) => {
      const c = await RawClient.open(port, level);
      await c.send(handConnect({ name: "MQTX", level, clientId: `mqtx-${level}` }));
      const rest = await c.closed();
      // The server MAY disconnect, or refuse; it MUST NOT go on as if this were MQTT.
      for (const p of rest) {
        expect(p.cmd).toBe("connack");
        const ack = p as IConnackPacket;
        expect(level === 5 ? ack.reasonCode : ack.returnCode).not.toBe(0);
      }
      await by.check();
    },
  );
});

describe("01-connect: accepted CONNECTs", () => {
  it("3.1 (MQIsdp, level 3): CONNACK 0 and a working session", async () => {
    const c = await RawClient.open(port, 3);
    await c.send(handConnect({ name: "MQIsdp", level: 3, clientId: "v31-client" }));
    await c.expect("connack");
    expect([...c.bytes()]).toEqual([0x20, 0x02, 0x00, 0x00]);
    // SUBSCRIBE t31, QoS 0 (by hand), then PUBLISH to it and get it back.
    await c.send(frame(0x82, [0x00, 0x01, ...str("t31"), 0x00]));
    const suback = await c.expect("suback");
    expect(suback.messageId).toBe(1);
    await c.send(frame(0x30, [...str("t31"), ...Buffer.from("hello 3.1")]));
    const pub = (await c.expect("publish")) as IPublishPacket;
    expect(pub.topic).toBe("t31");
    expect(pub.payload.toString()).toBe("hello 3.1");
    await c.send([0xc0, 0x00]);
    await c.expect("pingresp");
    expect(c.isClosed).toBe(false);
  });

  it("3.1.1: CONNACK is exactly 20 02 00 00 for a clean session [MQTT-3.2.2-1]", async () => {
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQTT", level: 4, clientId: "v311-client" }));
    await c.expect("connack");
    expect([...c.bytes()]).toEqual([0x20, 0x02, 0x00, 0x00]);
  });

  it("5.0: CONNACK reason 0, session present 0, with the server's Maximum Packet Size", async () => {
    const c = await RawClient.open(port, 5);
    await c.send(handConnect({ name: "MQTT", level: 5, clientId: "v5-client" }));
    const ack = (await c.expect("connack")) as IConnackPacket;
    expect(ack.reasonCode).toBe(0);
    expect(ack.sessionPresent).toBe(false);
    expect(ack.properties?.maximumPacketSize).toBe(1024 * 1024);
  });

  it("3.1.1: empty client id with clean session 0 -> CONNACK 0x02, then close [MQTT-3.1.3-8]", async () => {
    const c = await RawClient.open(port, 4);
    await c.send(handConnect({ name: "MQTT", level: 4, flags: 0x00, clientId: "" }));
    await c.closed();
    expect([...c.bytes()]).toEqual([0x20, 0x02, 0x00, 0x02]);
    await by.check();
  });
});

describe.each([4, 5] as const)("01-connect: first packet not CONNECT (protocol %i)", (ver) => {
  const cases: Array<[string, Buffer]> = [
    ["PINGREQ", Buffer.from([0xc0, 0x00])],
    ["PUBLISH", frame(0x30, [...str("a/b"), 0x68, 0x69])],
    ["PUBACK", Buffer.from([0x40, 0x02, 0x00, 0x01])],
    ["SUBSCRIBE", frame(0x82, [0x00, 0x01, ...str("a/#"), 0x00])],
    ["DISCONNECT", Buffer.from([0xe0, 0x00])],
  ];
  it.each(cases)("%s first -> closed without CONNACK [MQTT-3.1.0-1]", async (_name, bytes) => {
    const c = await RawClient.open(port, ver);
    await c.send(bytes);
    await c.closed();
    expect(c.bytes().length).toBe(0);
    await by.check();
  });

  it("CONNECT after a PUBACK on the same bytes is not processed", async () => {
    const c = await RawClient.open(port, ver);
    await c.send(Buffer.concat([Buffer.from([0x40, 0x02, 0x00, 0x01]), connectBytes(ver, `late-${ver}`)]));
    await c.closed();
    expect(c.bytes().length).toBe(0);
  });
});

describe("01-connect: second CONNECT [MQTT-3.1.0-2]", () => {
  it("3.1.1: closed, nothing sent", async () => {
    const c = await RawClient.connected(port, 4, "second-4");
    await c.send(connectBytes(4, "second-4"));
    const rest = await c.closed();
    expect(rest).toEqual([]);
    await by.check();
  });

  it("5.0: DISCONNECT 0x82 Protocol Error, then closed", async () => {
    const c = await RawClient.connected(port, 5, "second-5");
    await c.send(connectBytes(5, "second-5"));
    const rest = await c.closed();
    expect(rest.map((p) => p.cmd)).toEqual(["disconnect"]);
    expect((rest[0] as IDisconnectPacket).reasonCode).toBe(0x82);
    await by.check();
  });

  it("5.0, then a CONNECT of level 4: other 5.0 clients' packets are still read at 5.0", async () => {
    const c = await RawClient.connected(port, 5, "second-5-as-4");
    await c.send(connectBytes(4, "second-5-as-4"));
    await c.closed();
    // A SUBSCRIBE with properties goes to the shared 5.0 parser, which the CONNECT must not have changed.
    const topic = `second/${process.pid}`;
    const granted = await by.client.subscribeAsync(topic, { qos: 1, properties: { subscriptionIdentifier: 7 } });
    expect(granted.map((g) => g.qos)).toEqual([1]);
    const got = new Promise<IPublishPacket>((resolve) =>
      by.client.on("message", (t, _payload, packet) => {
        if (t === topic) resolve(packet);
      }),
    );
    await by.client.publishAsync(topic, "x", { qos: 1 });
    expect((await got).properties?.subscriptionIdentifier).toBe(7);
    await by.check();
  });
});

describe.each([4, 5] as const)("01-connect: CONNECT flags (protocol %i)", (ver) => {
  const flagCases: Array<[string, number, string]> = [
    ["reserved bit 0 set", 0x03, "MQTT-3.1.2-3"],
    ["will QoS 1 without will flag", 0x0a, "MQTT-3.1.2-13"],
    ["will retain without will flag", 0x22, "MQTT-3.1.2-15"],
  ];
  it.each(flagCases)("%s -> closed without CONNACK [%s]", async (_what, flags) => {
    const c = await RawClient.open(port, ver);
    await c.send(handConnect({ name: "MQTT", level: ver, flags, clientId: `flags-${ver}-${flags}` }));
    await c.closed();
    expect(c.bytes().length).toBe(0);
    await by.check();
  });

  it("will QoS 3 is never accepted [MQTT-3.1.2-14]", async () => {
    // Will flag + will QoS 3 + clean; will topic "w", payload "x".
    const body = [
      ...str("MQTT"),
      ver,
      0x1e,
      0,
      60,
      ...(ver === 5 ? [0] : []),
      ...str(`willq3-${ver}`),
      ...(ver === 5 ? [0] : []),
      ...str("w"),
      ...str("x"),
    ];
    const c = await RawClient.open(port, ver);
    await c.send(frame(0x10, body));
    const rest = await c.closed();
    for (const p of rest) {
      expect(p.cmd).toBe("connack");
      const ack = p as IConnackPacket;
      expect(ver === 5 ? ack.reasonCode : ack.returnCode).not.toBe(0);
    }
    await by.check();
  });
});

describe("01-connect: user name and password flags", () => {
  // 3.1.1 section 3.1.2.9: "If the User Name Flag is set to 0, the Password Flag MUST be set to
  // 0 [MQTT-3.1.2-22]"; a protocol violation closes the connection [MQTT-4.8.0-1].
  it("3.1.1: password flag without user name flag -> closed without CONNACK 0 [MQTT-3.1.2-22]", async () => {
    const body = [...str("MQTT"), 4, 0x42, 0, 60, ...str("pw-no-user"), ...str("secret")];
    const c = await RawClient.open(port, 4);
    await c.send(frame(0x10, body));
    // Either closed with nothing sent, or a refusing CONNACK and then closed.
    const first = await c.next().catch(() => null);
    if (first !== null) expect((first as IConnackPacket).returnCode, "CONNACK accepted the CONNECT").not.toBe(0);
    await c.closed();
  });

  it("5.0: password without user name is allowed (5.0 section 3.1.2.9)", async () => {
    const body = [...str("MQTT"), 5, 0x42, 0, 60, 0, ...str("pw-no-user-5"), ...str("secret")];
    const c = await RawClient.open(port, 5);
    await c.send(frame(0x10, body));
    const ack = (await c.expect("connack")) as IConnackPacket;
    expect(ack.reasonCode).toBe(0);
  });
});

describe("01-connect: generated bytes sanity", () => {
  it("gen() and handConnect() agree on a plain 3.1.1 CONNECT", () => {
    const a = handConnect({ name: "MQTT", level: 4, clientId: "same" });
    const b = gen(4, {
      cmd: "connect",
      protocolId: "MQTT",
      protocolVersion: 4,
      clientId: "same",
      clean: true,
      keepalive: 60,
    });
    expect(a.equals(b)).toBe(true);
  });
});

describe.each([4, 5] as const)("01-connect: DISCONNECT from the client (protocol %i)", (ver) => {
  it("what was sent before it arrives, then the broker closes with a FIN, not a reset [MQTT-3.14.4-1]", async () => {
    const topic = `bye/${ver}/${process.pid}`;
    const c = await RawClient.connected(port, ver, `bye-${ver}`);
    await c.subscribe(topic, 0);
    // One write: a PUBLISH the client is itself subscribed to, then DISCONNECT; the client keeps
    // its side open, so the close is the broker's.
    await c.send(
      Buffer.concat([
        gen(ver, { cmd: "publish", topic, payload: Buffer.from("last"), qos: 0, dup: false, retain: false }),
        gen(ver, { cmd: "disconnect" }),
      ]),
    );
    const rest = await c.closed();
    expect(rest.map((p) => p.cmd)).toEqual(["publish"]);
    expect((rest[0] as IPublishPacket).payload.toString()).toBe("last");
    expect(c.socketError).toBeNull();
    await by.check();
  });
});
