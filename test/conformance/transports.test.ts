// Every MQTT transport of the spec's port table end to end through the broker: TCP, TLS (the
// self-signed certificate generated into the data dir at first start), WebSocket and secure
// WebSocket on path /mqtt; a message published on one transport reaches subscribers on all four.

import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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
