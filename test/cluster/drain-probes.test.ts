// What a drain looks like from outside, on nodes started in-process: `/status` answers 503 at once
// and `/livez` 200 throughout, new MQTT connections are refused, an MQTT 5.0 client gets
// DISCONNECT 0x9C with a Server Reference to a running peer (0x8B on a single node), a single node
// does not wait for claims, a second stop ends the drain at once, and a session nobody claims is
// counted as lost.

import mqtt, { type IDisconnectPacket, type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();

const get = async (n: TestNode, path: string): Promise<[number, string]> => {
  const res = await fetch(`http://127.0.0.1:${n.managementPort("http")}${path}`);
  return [res.status, await res.text()];
};

/** A persistent 5.0 client that records the server's DISCONNECT and does not come back. */
async function persistentClient(
  url: string,
  clientId: string,
): Promise<{ c: MqttClient; seen: () => IDisconnectPacket | null }> {
  let packet: IDisconnectPacket | null = null;
  const c = await mqtt.connectAsync(url, {
    clientId,
    protocolVersion: 5,
    clean: false,
    properties: { sessionExpiryInterval: 600 },
    reconnectPeriod: 0,
  });
  c.on("error", () => {});
  c.on("disconnect", (p) => {
    packet = p;
  });
  await c.subscribeAsync("probe/t", { qos: 1 });
  return { c, seen: () => packet };
}

/** True when a CONNECT to `url` gets no CONNACK. */
function refused(url: string): Promise<boolean> {
  const c = mqtt.connect(url, { clientId: "late", reconnectPeriod: 0, connectTimeout: 2000 });
  c.on("error", () => {});
  return new Promise((resolve) => {
    c.once("connect", () => {
      c.end(true);
      resolve(false);
    });
    c.once("close", () => resolve(true));
  });
}

describe("drain of a single node", () => {
  let n: TestNode;
  beforeAll(async () => {
    n = await startTestNode();
  });
  afterAll(async () => {
    await n?.close();
  });

  it("answers /livez on every management port, then disconnects with 0x8B without waiting", async () => {
    for (const port of [n.managementPort("http"), n.managementPort("http_v2")]) {
      const res = await fetch(`http://127.0.0.1:${port}/livez`);
      expect([res.status, await res.text()]).toEqual([200, "ok"]);
    }
    expect((await get(n, "/status"))[0]).toBe(200);
    const { c, seen } = await persistentClient(n.url, "single-1");
    const t0 = Date.now();
    await n.drain();
    expect(Date.now() - t0).toBeLessThan(2000); // node.drain_timeout is 30 s: it did not wait
    await waitUntil(() => seen() !== null || c.disconnected, "client disconnected");
    expect(seen()?.reasonCode).toBe(0x8b);
    expect(seen()?.properties?.serverReference).toBeUndefined();
    await c.endAsync(true);
  });
});

describeEtcd("drain of a clustered node: probes and client redirection", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let n1: TestNode;
  let n2: TestNode;

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    const prefix = `svcprobe${Date.now()}`;
    const set = (name: string) => ({
      "node.name": `${name}@127.0.0.1`,
      "cluster.discovery": "etcd",
      "cluster.etcd.server": etcd.endpoint,
      "cluster.etcd.prefix": prefix,
      "cluster.etcd.node_ttl": "10s",
      "rpc.tcp_server_port": "0",
      "node.drain_timeout": "20s",
    });
    n1 = await startTestNode({ set: set("p1") });
    n2 = await startTestNode({ set: set("p2") });
    await waitUntil(() => n1.cluster?.servingPeers().length === 1, "n1 knows n2's MQTT address", 10_000);
  }, 30_000);

  afterAll(async () => {
    await n1?.close().catch(() => {});
    await n2?.close().catch(() => {});
    await etcd?.close();
  }, 30_000);

  it("turns not-ready, stays live, redirects 5.0 clients, and a second stop ends the wait", async () => {
    const { c, seen } = await persistentClient(n1.url, "probe-1");
    const lostBefore = n1.broker.metrics.get("session.lost");
    const draining = n1.drain();
    await waitUntil(() => seen() !== null, "DISCONNECT received");
    expect(seen()?.reasonCode).toBe(0x9c);
    expect(seen()?.properties?.serverReference).toBe(`127.0.0.1:${n2.port("tcp")}`);
    const [status, text] = await get(n1, "/status");
    expect(status).toBe(503);
    expect(text).toContain("is draining");
    expect(await get(n1, "/livez")).toEqual([200, "ok"]);
    expect(await refused(n1.url)).toBe(true);
    // n2 no longer sends clients to n1.
    await waitUntil(() => n2.cluster?.servingPeers().length === 0, "n1 marked draining on n2");
    await c.endAsync(true);

    // The client does not come back: the drain would wait 20 s; a second stop ends it now.
    const t0 = Date.now();
    await n1.stop();
    await draining;
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(n1.broker.metrics.get("session.lost") - lostBefore).toBe(1);
    await waitUntil(() => !n2.cluster?.runningNodes().some((r) => r.node === "p1@127.0.0.1"), "n1 gone from n2");
  }, 30_000);
});
