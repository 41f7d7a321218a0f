// `cluster join` / `cluster leave` with `cluster.discovery = manual`: a standalone node (a child
// process running `svc start`, so it can restart in place) joins the cluster of a node on a real
// etcd through the API, restarts in it, carries traffic across nodes, and leaves again; a node
// with another cookie is refused and told why.

import mqtt from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { type ChildNode, startChildNode } from "../helpers/child-node.ts";
import { describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 20000): Promise<void> =>
  waitUntil(pred, what, ms);

async function api(
  port: number,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: Record<string, unknown> }> {
  const r = await fetch(`http://127.0.0.1:${port}/api/v4${path}`, {
    method: body === undefined ? "GET" : "POST",
    headers: {
      authorization: `Basic ${Buffer.from("admin:public").toString("base64")}`,
      "content-type": "application/json",
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return { status: r.status, json: (await r.json()) as Record<string, unknown> };
}

describeEtcd("cluster join and leave (manual discovery)", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let a: TestNode;
  const children: ChildNode[] = [];

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    a = await startTestNode({
      set: {
        "node.name": "ja@127.0.0.1",
        "cluster.discovery": "etcd",
        "cluster.etcd.server": etcd.endpoint,
        "cluster.etcd.prefix": `join${Date.now()}`,
        "cluster.etcd.node_ttl": "2s",
        "rpc.tcp_server_port": "0",
      },
    });
  }, 30_000);

  afterAll(async () => {
    for (const c of children) {
      await c.kill();
      c.cleanup();
    }
    await a?.close();
    await etcd?.close();
  }, 30_000);

  const linkAddress = () => `127.0.0.1:${a.cluster?.link.port}`;

  it("refuses a node whose cookie differs, and says why", async () => {
    const b = await startChildNode({ "node.name": "jx@127.0.0.1", "node.cookie": "other", "rpc.tcp_server_port": "0" });
    children.push(b);
    const r = await api(b.apiPort() as number, "/cluster/join", { node: "ja@127.0.0.1", address: linkAddress() });
    expect(r.status).toBe(400);
    expect(String(r.json.message)).toMatch(/cookie differs/);
  }, 40_000);

  it("joins, restarts in the cluster, carries traffic, and leaves", async () => {
    const b = await startChildNode({ "node.name": "jb@127.0.0.1", "rpc.tcp_server_port": "0" });
    children.push(b);
    const before = b.apiPort() as number;
    const r = await api(before, "/cluster/join", { node: "ja@127.0.0.1", address: linkAddress() });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    await until(
      () => a.cluster?.runningNodes().some((n) => n.node === "jb@127.0.0.1") === true,
      "jb running in the cluster",
    );
    const newPort = () => b.apiPort();
    await until(() => newPort() !== before, "jb restarted");
    const status = await api(newPort() as number, "/cluster");
    expect((status.json.data as { running_nodes: string[] }).running_nodes).toEqual(["ja@127.0.0.1", "jb@127.0.0.1"]);

    // Traffic from a client on the joined node to a subscriber on the other.
    const tcp = [...b.output().matchAll(/"listener":"mqtt:tcp:external","host":"[^"]+","port":(\d+)/g)].at(-1)?.[1];
    const sub = await mqtt.connectAsync(a.url, { clientId: "join-sub", reconnectPeriod: 0 });
    await sub.subscribeAsync("join/t", { qos: 1 });
    const pub = await mqtt.connectAsync(`mqtt://127.0.0.1:${tcp}`, { clientId: "join-pub", reconnectPeriod: 0 });
    const got = new Promise<string>((res) => sub.once("message", (_t, p) => res(p.toString())));
    // The route of join/t reaches jb through etcd; publish until it is there.
    let received = false;
    got.then(() => {
      received = true;
    });
    await until(async () => {
      if (!received) await pub.publishAsync("join/t", "across", { qos: 1 });
      return received;
    }, "message across the joined nodes");
    expect(await got).toBe("across");
    await Promise.all([sub.endAsync(), pub.endAsync().catch(() => {})]);

    const leavePort = newPort() as number;
    const l = await api(leavePort, "/cluster/leave", {});
    expect(l.status, JSON.stringify(l.json)).toBe(200);
    await until(
      () => a.cluster?.runningNodes().some((n) => n.node === "jb@127.0.0.1") === false,
      "jb gone from the cluster",
    );
    await until(() => newPort() !== leavePort, "jb restarted alone");
    const alone = await api(newPort() as number, "/cluster");
    expect((alone.json.data as { running_nodes: string[] }).running_nodes).toEqual(["jb@127.0.0.1"]);
  }, 60_000);

  it("joins through a static seed at start", async () => {
    const c = await startChildNode({
      "node.name": "jc@127.0.0.1",
      "cluster.discovery": "static",
      "cluster.static.seeds": `ja@127.0.0.1:${a.cluster?.link.port}`,
      "rpc.tcp_server_port": "0",
    });
    children.push(c);
    await until(() => a.cluster?.runningNodes().some((n) => n.node === "jc@127.0.0.1") === true, "jc running");
  }, 40_000);
});
