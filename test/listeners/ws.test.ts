// WebSocket listener: path, sub-protocol negotiation, frames vs byte stream, limits, MQTT.js.
import { once } from "node:events";
import { request } from "node:http";
import { connect } from "node:net";
import mqtt from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { createListener } from "../../src/listeners/create-listener.ts";
import type { Listener } from "../../src/listeners/listener.ts";
import type { ListenerSettings } from "../../src/listeners/types.ts";
import { pickSubprotocol } from "../../src/listeners/ws.ts";
import { captureLogger, Fleet, listenerSettings, recordingHandler, settled } from "./helpers.ts";
import { collect, openWs, outcome } from "./ws-client.ts";

const fleet = new Fleet();
afterEach(() => fleet.cleanup());

async function wsListener(
  overrides: Partial<ListenerSettings> = {},
  echo = true,
): Promise<{ listener: Listener; rec: ReturnType<typeof recordingHandler>; url: string }> {
  const rec = recordingHandler({ echo });
  const listener = await fleet.start(
    createListener(listenerSettings("ws", overrides), rec.handler, {
      dataDir: "/nonexistent",
      logger: captureLogger(),
    }),
  );
  return { listener, rec, url: `ws://127.0.0.1:${listener.port}/mqtt` };
}

// PUBLISH "a/b" "hello" QoS 0 and a PINGREQ: two whole MQTT packets.
const PUBLISH = Buffer.from([0x30, 0x0a, 0x00, 0x03, 0x61, 0x2f, 0x62, 0x68, 0x65, 0x6c, 0x6c, 0x6f]);
const PINGREQ = Buffer.from([0xc0, 0x00]);

describe("ws listener", () => {
  it.each([
    [["mqtt"], "mqtt"],
    [["mqttv3.1.1"], "mqttv3.1.1"],
    [["mqttv3.1"], "mqttv3.1"],
    [["chat", "mqttv3.1.1", "mqtt"], "mqttv3.1.1"],
    [[], ""],
  ])("negotiates sub-protocol from offer %j", async (offer, chosen) => {
    const { url, rec } = await wsListener();
    expect(await outcome(openWs(fleet, url, offer))).toEqual({ open: true, protocol: chosen });
    await rec.next();
    expect(rec.accepted).toHaveLength(1);
  });

  it("refuses an offer without any MQTT sub-protocol (400)", async () => {
    const { url, rec } = await wsListener();
    expect(await outcome(openWs(fleet, url, ["chat"]))).toEqual({ open: false, status: 400 });
    expect(rec.accepted).toHaveLength(0);
  });

  it("refuses another path (404) and answers plain HTTP without upgrading", async () => {
    const { listener, rec } = await wsListener();
    expect(await outcome(openWs(fleet, `ws://127.0.0.1:${listener.port}/other`, "mqtt"))).toEqual({
      open: false,
      status: 404,
    });
    expect(await outcome(openWs(fleet, `ws://127.0.0.1:${listener.port}/mqtt/x`, "mqtt"))).toEqual({
      open: false,
      status: 404,
    });
    for (const [path, status] of [
      ["/mqtt", 426],
      ["/", 404],
    ] as const) {
      const req = request({ host: "127.0.0.1", port: listener.port, path });
      req.end();
      const [res] = (await once(req, "response")) as [import("node:http").IncomingMessage];
      res.resume();
      expect(res.statusCode).toBe(status);
    }
    expect(rec.accepted).toHaveLength(0);
  });

  it("answers an unparsable request target with 404 instead of crashing", async () => {
    const { listener, rec } = await wsListener();
    const raw = fleet.own(connect({ host: "127.0.0.1", port: listener.port }));
    raw.write(
      "GET http://[ HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" +
        "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n",
    );
    const [reply] = (await once(raw, "data")) as [Buffer];
    expect(reply.toString("latin1")).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(rec.accepted).toHaveLength(0);
  });

  it("reports the peer from the socket, never from headers", async () => {
    const { listener, url, rec } = await wsListener();
    const client = openWs(fleet, url, "mqtt", {
      headers: { "X-Forwarded-For": "10.9.8.7", "X-Real-IP": "10.9.8.7" },
    });
    await outcome(client);
    const conn = await rec.next();
    expect(conn.info).toMatchObject({
      listener: "mqtt:ws:test",
      protocol: "mqtt:ws",
      zone: "external",
      peerHost: "127.0.0.1",
      sockPort: listener.port,
    });
    expect(listener.info()).toMatchObject({
      protocol: "mqtt:ws",
      acceptors: 4,
      current_conns: 1,
      listen_on: `127.0.0.1:${listener.port}`,
    });
  });

  it("joins a packet split over several frames into one byte stream", async () => {
    const { url, rec } = await wsListener();
    const client = openWs(fleet, url, "mqtt");
    await outcome(client);
    const conn = await rec.next();
    const echoed = collect(client, PUBLISH.length);
    for (const part of [PUBLISH.subarray(0, 1), PUBLISH.subarray(1, 5), PUBLISH.subarray(5)]) client.send(part);
    expect((await conn.receivedAtLeast(PUBLISH.length)).equals(PUBLISH)).toBe(true);
    const back = await echoed;
    expect(back.bytes.equals(PUBLISH)).toBe(true);
    expect(back.allBinary).toBe(true);
  });

  it("passes several packets in one frame through as one byte stream", async () => {
    const { url, rec } = await wsListener();
    const client = openWs(fleet, url, "mqtt");
    await outcome(client);
    const conn = await rec.next();
    const both = Buffer.concat([PUBLISH, PINGREQ]);
    const echoed = collect(client, both.length);
    client.send(both);
    expect((await conn.receivedAtLeast(both.length)).equals(both)).toBe(true);
    expect((await echoed).bytes.equals(both)).toBe(true);
  });

  it("refuses a connection beyond max_connections (503) and counts shutdowns", async () => {
    const { url, rec, listener } = await wsListener({ maxConnections: 1 });
    const first = openWs(fleet, url, "mqtt");
    await outcome(first);
    const conn = await rec.next();
    expect(await outcome(openWs(fleet, url, "mqtt"))).toEqual({ open: false, status: 503 });
    expect(listener.info()).toMatchObject({ current_conns: 1, shutdown_count: { max_conns: 1 } });

    const gone = settled(conn.stream, "close");
    first.close();
    await gone;
    expect(listener.info()).toMatchObject({
      current_conns: 0,
      shutdown_count: { max_conns: 1, closed: 1 },
    });
  });

  it("stop() closes open WebSocket connections", async () => {
    const { url, listener, rec } = await wsListener();
    const client = openWs(fleet, url, "mqtt");
    await outcome(client);
    await rec.next();
    const closed = settled(client, "close");
    await listener.stop();
    await closed;
  });

  it("lets MQTT.js connect over ws; the handler gets the CONNECT bytes", async () => {
    const { listener, rec } = await wsListener({}, false);
    const client = mqtt.connect(`ws://127.0.0.1:${listener.port}/mqtt`, {
      reconnectPeriod: 0,
      protocolVersion: 4,
      clientId: "ws-e2e",
    });
    fleet.own(client);
    client.on("error", () => {});
    const conn = await rec.next();
    const head = await conn.receivedAtLeast(2);
    expect(head[0]).toBe(0x10);
    // MQTT.js may write the packet in several frames: wait for the whole remaining length.
    const bytes = await conn.receivedAtLeast(2 + (head[1] ?? 0));
    expect(bytes.includes(Buffer.from("ws-e2e"))).toBe(true);
    const connected = new Promise<void>((resolve) => client.once("connect", () => resolve()));
    conn.stream.write(Buffer.from([0x20, 0x02, 0x00, 0x00])); // CONNACK, accepted
    await connected;
    expect(client.connected).toBe(true);
  });
});

describe("pickSubprotocol", () => {
  it("chooses the first offered MQTT sub-protocol", () => {
    expect(pickSubprotocol(["x", "mqttv3.1", "mqtt"])).toBe("mqttv3.1");
    expect(pickSubprotocol(["x"])).toBeUndefined();
  });
});
