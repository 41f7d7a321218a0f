// Every MQTT transport of the spec's port table end to end through the broker: TCP, TLS (the
// self-signed certificate generated into the data dir at first start), WebSocket and secure
// WebSocket on path /mqtt; a message published on one transport reaches subscribers on all four;
// the deliveries of one WebSocket frame's packets reach a subscriber in one frame.

import mqtt, { type MqttClient } from "mqtt";
import mqttPacket from "mqtt-packet";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { WebSocket } from "ws";
import { startTestNode, type TestNode } from "../helpers/node.ts";

let node: TestNode;
const clients: MqttClient[] = [];

beforeAll(async () => {
  node = await startTestNode({
    set: { "listener.ssl.external": "127.0.0.1:0", "listener.wss.external": "127.0.0.1:0" },
  });
});
afterAll(async () => {
  await Promise.all(clients.map((c) => c.endAsync()));
  await node?.close();
});

const urls = (): Record<string, string> => ({
  tcp: `mqtt://127.0.0.1:${node.port("tcp")}`,
  ssl: `mqtts://127.0.0.1:${node.port("ssl")}`,
  ws: `ws://127.0.0.1:${node.port("ws")}/mqtt`,
  wss: `wss://127.0.0.1:${node.port("wss")}/mqtt`,
});

async function connect(kind: string, protocolVersion: 4 | 5): Promise<MqttClient> {
  const c = await mqtt.connectAsync(urls()[kind], {
    protocolVersion,
    clientId: `tr-${kind}-${protocolVersion}`,
    rejectUnauthorized: false, // the node's self-signed certificate
    reconnectPeriod: 0,
  });
  clients.push(c);
  return c;
}

describe.each([4, 5] as const)("transports, protocol %i", (v) => {
  it("delivers across tcp, ssl, ws and wss", async () => {
    const kinds = ["tcp", "ssl", "ws", "wss"];
    const subs = await Promise.all(kinds.map((k) => connect(k, v)));
    await Promise.all(subs.map((s) => s.subscribeAsync(`tr/${v}/#`, { qos: 1 })));
    for (const [i, from] of kinds.entries()) {
      const got = subs.map(
        (s) => new Promise<string>((resolve) => s.once("message", (_t, p) => resolve(p.toString()))),
      );
      await subs[i].publishAsync(`tr/${v}/${from}`, `from-${from}`, { qos: 1 });
      expect(await Promise.all(got)).toEqual(kinds.map(() => `from-${from}`));
    }
    const info = node.listenerInfo();
    expect(info.map((l) => l.protocol).sort()).toEqual(["mqtt:ssl", "mqtt:tcp", "mqtt:ws", "mqtt:wss"]);
    for (const l of info) expect(l.current_conns).toBeGreaterThanOrEqual(1);
  });
});

// MQTT over WebSocket (MQTT 5.0 section 6): a frame may carry several packets. The broker reads
// every packet of a frame in one turn, and what that turn sends a subscriber goes out as one frame.
describe.each(["ws", "wss"] as const)("packets in one WebSocket frame (%s)", (kind) => {
  async function open(id: string, frames: Buffer[]): Promise<WebSocket> {
    const ws = new WebSocket(urls()[kind], "mqtt", { rejectUnauthorized: false });
    ws.on("message", (d: Buffer) => frames.push(d));
    await new Promise((resolve, reject) => ws.once("open", resolve).once("error", reject));
    ws.send(mqttPacket.generate({ cmd: "connect", clientId: id, protocolVersion: 4, keepalive: 0 }));
    await until(() => frames.length === 1);
    expect([...frames[0]]).toEqual([0x20, 0x02, 0x00, 0x00]);
    return ws;
  }

  it("20 frames of 50 PUBLISHes each reach a subscriber in 20 frames at most", async () => {
    const topic = `frames/${kind}`;
    const got: Buffer[] = [];
    const sub = await open(`frames-sub-${kind}`, got);
    sub.send(mqttPacket.generate({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos: 0 }] }));
    await until(() => got.length === 2); // SUBACK
    const pub = await open(`frames-pub-${kind}`, []);
    const one = mqttPacket.generate({
      cmd: "publish",
      topic,
      payload: Buffer.from("x"),
      qos: 0,
      dup: false,
      retain: false,
    });
    const burst = Buffer.concat(Array.from({ length: 50 }, () => one));
    for (let i = 0; i < 20; i++) pub.send(burst);
    await until(() => got.slice(2).reduce((n, f) => n + f.length, 0) >= 20 * burst.length);
    // One frame per frame read at most (ws may read several of the publisher's frames at once).
    expect(got.length - 2).toBeLessThanOrEqual(20);
    expect(Buffer.concat(got.slice(2)).equals(Buffer.concat(Array.from({ length: 20 }, () => burst)))).toBe(true);
    sub.close();
    pub.close();
  });
});

/** Resolves once `ok()` holds, checked on each turn of the event loop (fails the test after 5 s). */
async function until(ok: () => boolean): Promise<void> {
  const t0 = Date.now();
  while (!ok()) {
    if (Date.now() - t0 > 5000) throw new Error("timed out");
    await new Promise((r) => setImmediate(r));
  }
}
