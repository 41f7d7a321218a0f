// Two nodes with cluster.discovery = k8s on a real etcd (test/helpers/etcd.ts), their peers from
// EndpointSlices served by an HTTP server in the test (test/k8s/fake-apiserver.ts: no real
// Kubernetes API server can run on this machine). The node names are the in-cluster ones
// (`svc@<pod>.svc-headless.<ns>.svc.cluster.local`), which do not resolve here: the link reaches the
// peer only through the pod address the slices give. A pod removed from the slices leaves the
// cluster at once, well before its lease (node_ttl) would expire.

import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { EtcdStore } from "../../src/cluster/etcd-store.ts";
import { ClusterKeys } from "../../src/cluster/keys.ts";
import { type ChildNode, startChildNode } from "../helpers/child-node.ts";
import { describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";
import { FakeApiServer } from "./fake-apiserver.ts";

const provider = await findEtcd();
const NS = "brokers";
const SVC = "svc-headless";
const nameOf = (pod: string) => `svc@${pod}.${SVC}.${NS}.svc.cluster.local`;
const TTL_MS = 20_000;

describeEtcd("k8s discovery: a cluster whose peers come from EndpointSlices", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let api: FakeApiServer;
  let a: TestNode;
  let b: ChildNode;
  let prefix: string;
  const clients: MqttClient[] = [];

  const settings = (pod: string): Record<string, string> => ({
    "node.name": nameOf(pod),
    "cluster.discovery": "k8s",
    "cluster.etcd.server": etcd.endpoint,
    "cluster.etcd.prefix": prefix,
    "cluster.etcd.node_ttl": `${TTL_MS / 1000}s`,
    "cluster.k8s.apiserver": api.url,
    "cluster.k8s.namespace": NS,
    "cluster.k8s.service_name": SVC,
    "rpc.tcp_server_port": "0",
  });

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    api = new FakeApiServer();
    await api.start();
    prefix = `svck8s${Date.now()}`;
    api.setSlice(NS, SVC, `${SVC}-x1`, [
      { name: "svc-0", ip: "127.0.0.1" },
      { name: "svc-1", ip: "127.0.0.1", ready: false },
    ]);
    a = await startTestNode({ set: settings("svc-0") });
    b = await startChildNode(settings("svc-1"));
    await waitUntil(() => (a.cluster?.runningNodes().length ?? 0) === 2, "membership", 15_000);
  }, 60_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    await a?.close().catch(() => {});
    await b?.kill();
    b?.cleanup();
    await api?.stop();
    await etcd?.close();
  }, 30_000);

  it("dials the peer at the pod address from the slices and carries messages across", async () => {
    const peers = a.cluster?.discoveredPeers() ?? [];
    expect(peers.map((p) => [p.node, p.address, p.ready])).toEqual([
      [nameOf("svc-0"), "127.0.0.1", true],
      [nameOf("svc-1"), "127.0.0.1", false],
    ]);
    const sub = await mqtt.connectAsync(`mqtt://127.0.0.1:${b.tcpPort}`, { clientId: "k8s-sub", reconnectPeriod: 0 });
    sub.on("error", () => {});
    clients.push(sub);
    await sub.subscribeAsync("k8s/t", { qos: 1 });
    await waitUntil(
      () => [...(a.cluster?.routes.entries() ?? [])].some(([f, n]) => f === "k8s/t" && n === nameOf("svc-1")),
      "route of svc-1 on svc-0",
      10_000,
    );
    const got = new Promise<string>((r) => sub.once("message", (_t, p) => r(p.toString())));
    const pub = await mqtt.connectAsync(a.url, { clientId: "k8s-pub", reconnectPeriod: 0 });
    clients.push(pub);
    await pub.publishAsync("k8s/t", "across", { qos: 1 });
    expect(await got).toBe("across");
    const link = a.cluster?.link.peers().find((p) => p.node === nameOf("svc-1"));
    expect(link?.address).toMatch(/^127\.0\.0\.1:\d+$/);
  }, 30_000);

  it("drops a pod removed from the slices at once, not after its lease", async () => {
    // The pod dies the hard way (no deregistration), and Kubernetes removes it from the slices.
    await b.kill();
    const removedAt = Date.now();
    api.setSlice(NS, SVC, `${SVC}-x1`, [{ name: "svc-0", ip: "127.0.0.1" }]);
    await waitUntil(
      () => !a.cluster?.runningNodes().some((r) => r.node === nameOf("svc-1")),
      "svc-1 out of the cluster",
      TTL_MS / 2,
    );
    await waitUntil(
      () => ![...(a.cluster?.routes.entries() ?? [])].some(([, n]) => n === nameOf("svc-1")),
      "routes of svc-1 gone",
      TTL_MS / 2,
    );
    const took = Date.now() - removedAt;
    console.info(`k8s discovery: removed pod left the cluster after ${took} ms (node_ttl ${TTL_MS} ms)`);
    expect(took).toBeLessThan(TTL_MS / 4);
    // etcd says so too: its registration is gone for every node.
    const store = new EtcdStore({ hosts: [etcd.endpoint] });
    try {
      const keys = new ClusterKeys(prefix, "svccl");
      expect(await store.get(keys.node(nameOf("svc-1")))).toBeUndefined();
      expect(await store.get(keys.node(nameOf("svc-0")))).toBeDefined();
    } finally {
      await store.close();
    }
  }, 30_000);
});
