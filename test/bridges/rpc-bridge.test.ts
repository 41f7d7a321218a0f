// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${node} is a placeholder of the bridge configuration
// RPC bridges: forwarding to another node of the cluster over the inter-node link (two real svc
// nodes clustered on a real etcd). The receiving node publishes what it gets; while the node is
// not running, the bridge caches and sends once it is back.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { clusterMember, describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();

describeEtcd("RPC bridge between two nodes of a cluster", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let etcDir: string;
  const nodes: TestNode[] = [];
  const clients: MqttClient[] = [];
  const prefix = `svcrpcbridge${Date.now()}`;

  const startNode = (name: string, dataDir?: string) =>
    startTestNode({
      dataDir,
      set: {
        ...clusterMember(name, etcd, prefix),
        "plugins.etc_dir": etcDir,
      },
    });

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    etcDir = mkdtempSync(join(tmpdir(), "svc-rpc-bridge-etc-"));
    writeFileSync(
      join(etcDir, "svc_bridge_mqtt.conf"),
      [
        "bridge.mqtt.emqx.address = r2@127.0.0.1",
        "bridge.mqtt.emqx.forwards = sensor/#",
        "bridge.mqtt.emqx.mountpoint = bridge/emqx/${node}/",
        "bridge.mqtt.emqx.reconnect_interval = 200ms",
        "bridge.mqtt.emqx.start_type = auto",
        // Started before r2 exists, with the default reconnect interval (30 s): it waits for r2
        // to join rather than for a reconnection.
        "bridge.mqtt.early.address = r2@127.0.0.1",
        "bridge.mqtt.early.forwards = early/#",
        "bridge.mqtt.early.start_type = auto",
        "",
      ].join("\n"),
    );
    nodes.push(await startNode("r1"));
    await nodes[0].plugins.load("svc_bridge_mqtt");
    expect(nodes[0].services.bridges.get("early")?.status).toBe("Connecting");
    nodes.push(await startNode("r2"));
    await waitUntil(() => nodes.every((n) => (n.cluster?.runningNodes().length ?? 0) === 2), "membership", 10_000);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    for (const n of nodes) await n.close().catch(() => {});
    await etcd?.close();
    rmSync(etcDir, { recursive: true, force: true });
  }, 30_000);

  it("forwards under the mountpoint to the node, which publishes it to the whole cluster", async () => {
    const [r1, r2] = nodes;
    await waitUntil(() => r1.services.bridges.get("emqx")?.status === "Running", "bridge running");
    await waitUntil(() => r1.services.bridges.get("early")?.status === "Running", "early bridge running");
    expect(r1.services.bridges.get("emqx")?.kind).toBe("rpc");
    const sub = await mqtt.connectAsync(r2.url, { clientId: "rpc-sub", reconnectPeriod: 0 });
    clients.push(sub);
    await sub.subscribeAsync("bridge/#", { qos: 1 });
    const got: [string, string][] = [];
    sub.on("message", (t, p) => got.push([t, p.toString()]));
    const pub = await mqtt.connectAsync(r1.url, { clientId: "rpc-pub", reconnectPeriod: 0 });
    clients.push(pub);
    for (let i = 0; i < 5; i++) await pub.publishAsync(`sensor/${i}`, `v${i}`, { qos: 1 });
    await waitUntil(() => got.length === 5, "forwarded messages on r2");
    expect(got).toEqual(Array.from({ length: 5 }, (_, i) => [`bridge/emqx/r1@127.0.0.1/sensor/${i}`, `v${i}`]));
    await waitUntil(() => r1.services.bridges.get("emqx")?.forwarded === 5, "acknowledged");
  }, 20_000);

  it("caches while the node is down and sends in order once it runs again", async () => {
    const r1 = nodes[0];
    const r2dir = nodes[1].dataDir;
    // The subscriber is on r1: r2 publishes what it receives to the whole cluster.
    const sub = await mqtt.connectAsync(r1.url, { clientId: "rpc-sub-2", reconnectPeriod: 0 });
    clients.push(sub);
    await sub.subscribeAsync("bridge/emqx/#", { qos: 1 });
    const got: string[] = [];
    sub.on("message", (_t, p) => got.push(p.toString()));
    const pub = await mqtt.connectAsync(r1.url, { clientId: "rpc-pub-2", reconnectPeriod: 0 });
    clients.push(pub);
    await nodes[1].close(true);
    nodes.pop();
    await waitUntil(() => r1.services.bridges.get("emqx")?.status === "Connecting", "bridge down", 10_000);
    for (let i = 0; i < 3; i++) await pub.publishAsync(`sensor/late/${i}`, `late${i}`, { qos: 1 });
    expect(r1.services.bridges.get("emqx")?.queued).toBe(3);
    nodes.push(await startNode("r2", r2dir));
    await waitUntil(() => got.length === 3, "cached messages after r2 is back", 15_000);
    expect(got).toEqual(["late0", "late1", "late2"]);
  }, 30_000);
});
