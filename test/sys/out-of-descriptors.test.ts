// A node that has used up its file descriptors (a connection storm at the OS limit) keeps running:
// the connections it cannot take are refused, its monitors (sysmon every second, the OS memory
// check, which reads the resident set size from /proc and cannot while no descriptor is free) go on
// without throwing, its clients keep publishing and receiving, the API answers on a connection it
// already holds, and it accepts again once descriptors are freed; its start warned of the limit. The node is a child process
// whose soft descriptor limit the test sets.

import net from "node:net";
import mqtt, { type MqttClient } from "mqtt";
import mqttPacket from "mqtt-packet";
import { afterAll, expect, it } from "vitest";
import { type ChildNode, startChildNode } from "../helpers/child-node.ts";
import { waitUntil } from "../helpers/wait.ts";

const NOFILE = 256;
/** More connection attempts than the node has descriptors. */
const ATTEMPTS = NOFILE + 64;

const clients: MqttClient[] = [];
const sockets: net.Socket[] = [];
let node: ChildNode | undefined;

afterAll(async () => {
  for (const s of sockets) s.destroy();
  for (const c of clients) c.end(true);
  await node?.kill();
  node?.cleanup();
});

function connectMqtt(port: number, clientId: string): Promise<MqttClient> {
  return new Promise((resolve, reject) => {
    const c = mqtt.connect(`mqtt://127.0.0.1:${port}`, { clientId, protocolVersion: 4, reconnectPeriod: 0 });
    c.on("error", () => {});
    c.once("connect", () => {
      clients.push(c);
      resolve(c);
    });
    c.once("close", () => reject(new Error(`${clientId}: closed before CONNACK`)));
  });
}

/** A raw connection that sends CONNECT: resolves true on CONNACK (kept open), false when closed first. */
function rawConnect(port: number, i: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    sockets.push(s);
    s.on("error", () => {});
    s.once("connect", () =>
      s.write(mqttPacket.generate({ cmd: "connect", clientId: `fd-${i}`, keepalive: 0, protocolVersion: 4 })),
    );
    s.once("data", (d) => resolve(d[0] === 0x20));
    s.once("close", () => resolve(false));
  });
}

/** One HTTP request over an already open connection; resolves with the status and the body. */
function requestOver(s: net.Socket, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    let text = "";
    s.setEncoding("utf8");
    s.on("data", (d: string) => {
      text += d;
    });
    s.once("end", () => {
      const status = Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1] ?? 0);
      resolve({ status, body: text.slice(text.indexOf("\r\n\r\n") + 4) });
    });
    s.once("error", reject);
    const auth = Buffer.from("admin:public").toString("base64");
    s.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Basic ${auth}\r\nConnection: close\r\n\r\n`);
  });
}

it("keeps serving while it has no file descriptor left, and accepts again once some are freed", async () => {
  node = await startChildNode(
    {
      "listener.tcp.external.max_conn_rate": "0",
      // Every sysmon check (each second) publishes large_heap, so the test sees each one happen.
      "sysmon.large_heap": "1KB",
      "sysmon.window": "1ms",
      "sysmon.os.mem_check_interval": "100ms",
      "management.listener.http_v2": "off",
    },
    { nofile: NOFILE },
  );
  // The start warned of the limit.
  await waitUntil(() => node?.output().includes(`may open ${NOFILE} files`) === true, "the descriptor warning");
  const port = node.tcpPort;
  const apiPort = node.apiPort();
  expect(apiPort).toBeDefined();

  const watcher = await connectMqtt(port, "watcher");
  const sysmonAt: number[] = [];
  const got: string[] = [];
  watcher.on("message", (topic, payload) => {
    if (topic.endsWith("/sysmon/large_heap")) sysmonAt.push(Date.now());
    else got.push(`${topic} ${payload}`);
  });
  await watcher.subscribeAsync({ "$SYS/brokers/+/sysmon/large_heap": { qos: 0 }, "t/#": { qos: 1 } });
  // The API connection is opened while descriptors are still free.
  const api = net.connect({ host: "127.0.0.1", port: apiPort as number });
  sockets.push(api);
  await new Promise((r) => api.once("connect", r));

  // A storm: more connections than descriptors, a few at a time.
  let accepted = 0;
  let refused = 0;
  for (let i = 0; i < ATTEMPTS; i += 16) {
    const batch = Array.from({ length: Math.min(16, ATTEMPTS - i) }, (_, k) => rawConnect(port, i + k));
    for (const ok of await Promise.all(batch)) ok ? accepted++ : refused++;
  }
  expect(accepted).toBeGreaterThan(100);
  expect(refused).toBeGreaterThan(0);

  // Two sysmon checks (and some twenty memory checks) pass with no descriptor free.
  const exhaustedAt = Date.now();
  await waitUntil(() => sysmonAt.filter((t) => t > exhaustedAt).length >= 2, "two sysmon checks", 10_000);
  expect(node.proc.exitCode).toBeNull();

  // Its clients are served, and so is the API on the connection it already holds.
  await watcher.publishAsync("t/1", "still here", { qos: 1 });
  await waitUntil(() => got.includes("t/1 still here"), "the watcher's own message");
  const res = await requestOver(api, "/api/v4/nodes");
  expect(res.status).toBe(200);
  const nodes = JSON.parse(res.body) as { code: number; data: { connections: number; memory_total: unknown }[] };
  expect(nodes.code).toBe(0);
  expect(nodes.data[0].connections).toBeGreaterThan(accepted);

  // Descriptors freed: new clients get in again.
  for (const s of sockets.splice(0)) s.destroy();
  let late: MqttClient | undefined;
  await waitUntil(
    async () => {
      late = await connectMqtt(port, "late").catch(() => undefined);
      return late !== undefined;
    },
    "a connection once descriptors are free",
    10_000,
  );
  expect(node.proc.exitCode).toBeNull();
}, 60_000);
