// CONNECT / CONNACK conformance (MQTT 3.1.1 sections 3.1, 3.2; MQTT 5.0 sections 3.1, 3.2, 4.13):
// client identifier rules [MQTT-3.1.3-6..9], Assigned Client Identifier (5.0 3.2.2.3.7), client id
// length limit, Keep Alive enforced at 1.5x [MQTT-3.1.2-24] (5.0 DISCONNECT 0x8D), Server Keep
// Alive (5.0 3.2.2.3.14, [MQTT-3.2.2-21]), the idle timeout for connections that never send
// CONNECT, anonymous access refused (3.1.1 return code 5, 5.0 0x87), first packet CONNECT
// [MQTT-3.1.0-1], a second CONNECT [MQTT-3.1.0-2], unsupported protocol level [MQTT-3.1.2-2].

import type { IConnackPacket, IDisconnectPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { connect, type Proto, Raw, useNode, waitUntil } from "./helpers.ts";

const rc = (p: IConnackPacket): number | undefined => (p.reasonCode ?? p.returnCode) as number | undefined;

describe("idle connections", () => {
  const node = useNode({ "zone.external.idle_timeout": "300ms" });

  it("closes a TCP connection that never sends CONNECT", async () => {
    const raw = await Raw.open(node());
    const t0 = Date.now();
    await raw.closed(3000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it("closes a connection whose first packet is not CONNECT [MQTT-3.1.0-1]", async () => {
    const raw = await Raw.open(node());
    raw.send({ cmd: "pingreq" });
    await raw.closed();
    expect(raw.isClosed).toBe(true);
  });

  it("answers an unsupported protocol level with CONNACK 0x01 and closes [MQTT-3.1.2-2]", async () => {
    const raw = await Raw.open(node());
    // CONNECT, protocol name MQTT, level 6, clean session, keepalive 0, client id "x".
    raw.sendBytes(Buffer.from([0x10, 13, 0, 4, 0x4d, 0x51, 0x54, 0x54, 6, 0x02, 0, 0, 0, 1, 0x78]));
    const ack = (await raw.next("connack")) as IConnackPacket;
    expect(ack.returnCode).toBe(1);
    await raw.closed();
  });
});

describe.each([4, 5] as const)("CONNECT, protocol %i", (v: Proto) => {
  const node = useNode({ "zone.external.max_clientid_len": "23" });

  it("accepts an empty client id with a clean session", async () => {
    const { raw, connack } = await Raw.connect(node(), v, { clientId: "", clean: true });
    expect(rc(connack)).toBe(0);
    expect(connack.sessionPresent).toBe(false);
    if (v === 5) {
      // 5.0: the server must return the identifier it assigned [MQTT-3.2.2-16].
      const assigned = connack.properties?.assignedClientIdentifier;
      expect(typeof assigned).toBe("string");
      expect((assigned as string).length).toBeGreaterThan(0);
      expect(node().services.clients.lookup(assigned as string)).toHaveLength(1);
    } else {
      expect(connack.properties).toBeUndefined();
    }
    // The connection is usable.
    expect(await raw.barrier()).toEqual([]);
  });

  it.runIf(v === 4)("refuses an empty client id without clean session with CONNACK 2 [MQTT-3.1.3-8]", async () => {
    const raw = await Raw.open(node(), v);
    // mqtt-packet refuses to build this CONNECT: level 4, flags 0 (clean session off), client id "".
    raw.sendBytes(Buffer.from([0x10, 12, 0, 4, 0x4d, 0x51, 0x54, 0x54, 4, 0x00, 0, 0, 0, 0]));
    const connack = (await raw.next("connack")) as IConnackPacket;
    expect(connack.returnCode).toBe(2);
    expect(connack.sessionPresent).toBe(false);
    await raw.closed();
  });

  it("refuses a client id longer than mqtt.max_clientid_len and accepts one at the limit", async () => {
    const long = await Raw.connect(node(), v, { clientId: "x".repeat(24) });
    expect(rc(long.connack)).toBe(v === 5 ? 0x85 : 2);
    await long.raw.closed();
    const ok = await Raw.connect(node(), v, { clientId: `${v}`.padEnd(23, "y") });
    expect(rc(ok.connack)).toBe(0);
  });

  it("disconnects a client silent for 1.5x its keepalive [MQTT-3.1.2-24]", async () => {
    const { raw, connack } = await Raw.connect(node(), v, { keepalive: 1 });
    expect(rc(connack)).toBe(0);
    const t0 = Date.now();
    await raw.closed(4000);
    const elapsed = raw.closedAt - t0;
    expect(elapsed).toBeGreaterThanOrEqual(1000);
    expect(elapsed).toBeLessThan(2500);
    const rest = await raw.next("disconnect", 1).catch(() => undefined);
    // 5.0 may say why before closing: Keep Alive timeout.
    if (v === 5 && rest !== undefined) expect((rest as IDisconnectPacket).reasonCode).toBe(0x8d);
  });

  it("keeps a client that sends PINGREQ within its keepalive", async () => {
    const c = await connect(node(), v, { keepalive: 1 });
    let pongs = 0;
    c.c.on("packetreceive", (p) => {
      if (p.cmd === "pingresp") pongs++;
    });
    // Two round trips span more than 1.5 x keepalive.
    await waitUntil(() => pongs >= 2 || !c.c.connected, "two PINGRESP", 6000);
    expect(c.c.connected).toBe(true);
    expect(pongs).toBe(2);
  });

  it("closes the connection on a second CONNECT [MQTT-3.1.0-2]", async () => {
    const { raw } = await Raw.connect(node(), v);
    raw.send({ cmd: "connect", protocolId: "MQTT", protocolVersion: v, clean: true, keepalive: 0, clientId: "again" });
    await raw.closed();
    expect(raw.isClosed).toBe(true);
  });
});

describe.each([4, 5] as const)("anonymous access refused, protocol %i", (v: Proto) => {
  const node = useNode({ allow_anonymous: "false" });

  it("refuses CONNECT without credentials (3.1.1 return code 5, 5.0 0x87)", async () => {
    const { raw, connack } = await Raw.connect(node(), v);
    expect(rc(connack)).toBe(v === 5 ? 0x87 : 5);
    expect(connack.sessionPresent).toBe(false);
    await raw.closed();
  });
});

describe("5.0 Server Keep Alive", () => {
  const node = useNode({ "zone.external.server_keepalive": "1" });

  it("sends Server Keep Alive in CONNACK and enforces it", async () => {
    const { raw, connack } = await Raw.connect(node(), 5, { keepalive: 60 });
    expect(connack.reasonCode).toBe(0);
    expect(connack.properties?.serverKeepAlive).toBe(1);
    const t0 = Date.now();
    await raw.closed(4000);
    expect(raw.closedAt - t0).toBeGreaterThanOrEqual(1000);
    expect(raw.closedAt - t0).toBeLessThan(2500);
  });

  it("MQTT.js follows the Server Keep Alive", async () => {
    const c = await connect(node(), 5, { keepalive: 60 });
    expect(c.connack.properties?.serverKeepAlive).toBe(1);
    expect(c.c.connected).toBe(true);
  });
});
