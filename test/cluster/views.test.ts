// Cluster-wide management views: three svc nodes on a real etcd (test/helpers/etcd.ts), all ports
// 0, clients connected to different nodes, the management API asked over real HTTP on any node.
// `/clients` (with pagination across nodes), `/subscriptions`, `/routes`, `/brokers`, `/nodes`,
// `/metrics`, `/stats`, `/plugins`, `/listeners`, `/alarms` answer for the whole cluster, the node
// forms for one node through the link; kick and subscribe reach a client on another node; a node
// that does not answer is left out of the lists and a call to it answers 500 badrpc; `cluster
// status` shows a closed node stopped.

import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageAcross, partOf } from "../../src/services/cluster-calls.ts";
import { type Answer, http } from "../api/helpers.ts";
import { startChildNode } from "../helpers/child-node.ts";
import { describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const provider = await findEtcd();

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 8000): Promise<void> =>
  waitUntil(pred, what, ms);

describe("pageAcross", () => {
  const lists = [["a1", "a2", "a3"], [], ["b1"], ["c1", "c2", "c3", "c4"]];
  const all = lists.flat();

  it("cuts the same pages as the concatenated list, from parts cut to start + limit rows or (the first) to the window", () => {
    for (const firstExact of [false, true])
      for (const limit of [1, 2, 3, 5, 10])
        for (let page = 1; page <= 10; page++) {
          const w = { start: (page - 1) * limit, limit };
          const got = pageAcross(
            lists.map((l, i) => partOf(l, w, (x) => x, firstExact && i === 0)),
            w,
          );
          expect(got, `page ${page} limit ${limit} ${firstExact}`).toEqual({
            rows: all.slice(w.start, w.start + limit),
            count: 8,
          });
        }
  });

  it("a part cut to the window builds the window's rows only", () => {
    const built: number[] = [];
    const part = partOf(
      [1, 2, 3, 4, 5, 6, 7],
      { start: 4, limit: 2 },
      (n) => {
        built.push(n);
        return n * 10;
      },
      true,
    );
    expect(part).toEqual({ count: 7, rows: [50, 60], from: 4 });
    expect(built).toEqual([5, 6]);
    expect(pageAcross([part], { start: 4, limit: 2 })).toEqual({ rows: [50, 60], count: 7 });
  });

  it("builds the rows of a part's first start + limit items only, and counts them all", () => {
    const built: number[] = [];
    const part = partOf([1, 2, 3, 4, 5, 6, 7], { start: 2, limit: 2 }, (n) => {
      built.push(n);
      return n * 10;
    });
    expect(part).toEqual({ count: 7, rows: [10, 20, 30, 40] });
    expect(built).toEqual([1, 2, 3, 4]);
  });
});

describeEtcd("cluster-wide management views", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  let prefix: string;
  const nodes: TestNode[] = [];
  const clients: MqttClient[] = [];
  const N = ["v1@127.0.0.1", "v2@127.0.0.1", "v3@127.0.0.1"];

  const clusterSet = () => ({
    "cluster.discovery": "etcd",
    "cluster.etcd.server": etcd.endpoint,
    "cluster.etcd.prefix": prefix,
    "cluster.etcd.node_ttl": "2s",
    "rpc.tcp_server_port": "0",
  });

  const start = (name: string): Promise<TestNode> => startTestNode({ set: { "node.name": name, ...clusterSet() } });

  const client = async (n: TestNode, clientId: string, username?: string): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(n.url, { clientId, username, protocolVersion: 5, reconnectPeriod: 0 });
    clients.push(c);
    return c;
  };

  const get = (n: TestNode, path: string): Promise<Answer> => http(n, "http", "GET", path);
  const node = (i: number) => encodeURIComponent(N[i]);

  /** Waits until every node sees `filter` routed to `owner`. */
  const routed = (filter: string, owner: TestNode) =>
    until(
      () =>
        nodes.every(
          (n) =>
            n === owner ||
            [...(n.cluster?.routes.entries() ?? [])].some(([f, o]) => f === filter && o === owner.broker.nodeName),
        ),
      `route ${filter}`,
    );

  // Clients: a1, a2 on v1; b1, b2, b3 on v2; c1 on v3 (a1 and b1 share a user name).
  const placement: Record<string, string> = {
    a1: N[0],
    a2: N[0],
    b1: N[1],
    b2: N[1],
    b3: N[1],
    c1: N[2],
  };
  type Row = { clientid: string; node: string };
  const mine = (rows: Row[]): Row[] => rows.filter((r) => r.clientid in placement);
  const c: Record<string, MqttClient> = {};

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    prefix = `svcviews${Date.now()}`;
    for (const name of N) nodes.push(await start(name));
    await until(() => nodes.every((n) => (n.cluster?.runningNodes().length ?? 0) === 3), "membership");
    for (const [id, at] of Object.entries(placement))
      c[id] = await client(nodes[N.indexOf(at)], id, id === "a1" || id === "b1" ? "shared-user" : undefined);
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((x) => x.endAsync().catch(() => {})));
    for (const n of nodes) await n.close().catch(() => {});
    await etcd?.close();
  }, 30_000);

  it("lists the clients of every node on any node, with each one's node", async () => {
    const lists: string[][] = [];
    for (const n of nodes) {
      const a = await get(n, "/api/v4/clients");
      expect(a.status).toBe(200);
      const rows = mine(a.body.data);
      expect(Object.fromEntries(rows.map((r: { clientid: string; node: string }) => [r.clientid, r.node]))).toEqual(
        placement,
      );
      expect(a.body.meta.count).toBe(a.body.data.length);
      lists.push(a.body.data.map((r: { clientid: string }) => r.clientid));
    }
    // The same order whichever node answers: by node name, each node's clients in its order.
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
    const nodesInOrder = mine((await get(nodes[2], "/api/v4/clients")).body.data).map((r: { node: string }) => r.node);
    expect(nodesInOrder).toEqual([...nodesInOrder].sort());
  });

  it("pages across nodes: pages are disjoint, stable, and add up to the list", async () => {
    const full = (await get(nodes[0], "/api/v4/clients")).body.data.map((r: { clientid: string }) => r.clientid);
    for (const limit of [1, 2, 4]) {
      const seen: string[] = [];
      for (let page = 1; page <= Math.ceil(full.length / limit) + 1; page++) {
        const a = await get(nodes[page % 3], `/api/v4/clients?_page=${page}&_limit=${limit}`);
        expect(a.body.meta).toEqual({ page, limit, count: full.length });
        seen.push(...a.body.data.map((r: { clientid: string }) => r.clientid));
      }
      expect(seen, `limit ${limit}`).toEqual(full);
    }
    // Filters run on each node.
    const b = await get(nodes[0], "/api/v4/clients?_like_clientid=b&_limit=2&_page=2");
    expect(b.body.meta.count).toBe(3);
    expect(b.body.data.map((r: { clientid: string; node: string }) => [r.clientid, r.node])).toEqual([["b3", N[1]]]);
  });

  it("answers the node-scoped client forms for that node, 404 for an unknown node", async () => {
    const [n1, n2] = nodes;
    const onV2 = await get(n1, `/api/v4/nodes/${node(1)}/clients`);
    expect(mine(onV2.body.data).map((r: { clientid: string }) => r.clientid)).toEqual(["b1", "b2", "b3"]);
    expect(onV2.body.data.every((r: { node: string }) => r.node === N[1])).toBe(true);
    expect((await get(n1, `/api/v4/nodes/${node(1)}/clients/b1`)).body.data).toEqual([
      expect.objectContaining({ clientid: "b1", node: N[1], connected: true }),
    ]);
    expect((await get(n1, `/api/v4/nodes/${node(0)}/clients/b1`)).body.data).toEqual([]);
    expect((await get(n1, "/api/v4/clients/c1")).body.data).toEqual([
      expect.objectContaining({ clientid: "c1", node: N[2] }),
    ]);
    expect((await get(n2, "/api/v4/clients/nobody")).body.data).toEqual([]);
    const byUser = (await get(n2, "/api/v4/clients/username/shared-user")).body.data;
    expect(byUser.map((r: { clientid: string; node: string }) => [r.clientid, r.node]).sort()).toEqual([
      ["a1", N[0]],
      ["b1", N[1]],
    ]);
    expect(
      (await get(n2, `/api/v4/nodes/${node(0)}/clients/username/shared-user`)).body.data.map(
        (r: { clientid: string }) => r.clientid,
      ),
    ).toEqual(["a1"]);
    const unknown = await get(n1, `/api/v4/nodes/${encodeURIComponent("nope@127.0.0.1")}/clients`);
    expect([unknown.status, unknown.body.code]).toEqual([404, 404]);
    // v2 forms
    const v2 = await http(n1, "http", "GET", `/api/v2/nodes/${node(2)}/clients`);
    expect(v2.body.result.objects.map((o: { client_id: string }) => o.client_id)).toEqual(["c1"]);
    expect(v2.body.result.total_num).toBe(1);
    expect((await http(n1, "http", "GET", "/api/v2/clients/b2")).body.result.objects).toEqual([
      expect.objectContaining({ client_id: "b2" }),
    ]);
  });

  it("lists subscriptions and the cluster route table on any node", async () => {
    const [n1, , n3] = nodes;
    await c.c1.subscribeAsync("views/c1", { qos: 1 });
    await c.b1.subscribeAsync("views/b/#", { qos: 0 });
    await routed("views/c1", n3);
    await routed("views/b/#", nodes[1]);
    const subs = (await get(n1, "/api/v4/subscriptions")).body.data.filter((s: { topic: string }) =>
      s.topic.startsWith("views/"),
    );
    expect(subs).toEqual([
      { clientid: "b1", node: N[1], topic: "views/b/#", qos: 0 },
      { clientid: "c1", node: N[2], topic: "views/c1", qos: 1 },
    ]);
    expect((await get(n1, "/api/v4/subscriptions/c1")).body.data).toEqual([
      { clientid: "c1", node: N[2], topic: "views/c1", qos: 1 },
    ]);
    expect((await get(n1, `/api/v4/nodes/${node(1)}/subscriptions`)).body.data).toEqual([
      { clientid: "b1", node: N[1], topic: "views/b/#", qos: 0 },
    ]);
    expect((await get(n1, `/api/v4/nodes/${node(0)}/subscriptions/c1`)).body.data).toEqual([]);
    const routes = (await get(n1, "/api/v4/routes")).body.data;
    expect(routes).toEqual(
      expect.arrayContaining([
        { topic: "views/c1", node: N[2] },
        { topic: "views/b/#", node: N[1] },
      ]),
    );
    // The same table on every node.
    for (const n of nodes) expect((await get(n, "/api/v4/routes")).body.data).toEqual(routes);
    expect((await get(n1, `/api/v4/routes/${encodeURIComponent("views/c1")}`)).body.data).toEqual([
      { topic: "views/c1", node: N[2] },
    ]);
  });

  it("publishes over HTTP on one node to a subscriber on another", async () => {
    const [n1, , n3] = nodes;
    await routed("views/c1", n3);
    const got = new Promise<string>((r) => c.c1.once("message", (_t, p) => r(p.toString())));
    const a = await http(n1, "http", "POST", "/api/v4/mqtt/publish", {
      body: { topic: "views/c1", payload: "over http", qos: 1 },
    });
    expect(a.body).toEqual({ code: 0 });
    expect(await got).toBe("over http");
  });

  it("subscribes and unsubscribes a client on another node", async () => {
    const [n1, n2] = nodes;
    const a = await http(n1, "http", "POST", "/api/v4/mqtt/subscribe", {
      body: { clientid: "b2", topic: "views/api", qos: 1 },
    });
    expect(a.body).toEqual({ code: 0 });
    expect(n2.services.subscriptions.ofClient("b2")).toEqual([
      { clientid: "b2", node: N[1], topic: "views/api", qos: 1 },
    ]);
    await routed("views/api", n2);
    const got = new Promise<string>((r) => c.b2.once("message", (_t, p) => r(p.toString())));
    await http(nodes[2], "http", "POST", "/api/v4/mqtt/publish", { body: { topic: "views/api", payload: "x" } });
    expect(await got).toBe("x");
    expect(
      (
        await http(n1, "http", "POST", "/api/v4/mqtt/unsubscribe", {
          body: { clientid: "b2", topic: "views/api" },
        })
      ).body,
    ).toEqual({ code: 0 });
    expect(n2.services.subscriptions.ofClient("b2")).toEqual([]);
    const none = await http(n1, "http", "POST", "/api/v4/mqtt/subscribe", {
      body: { clientid: "nobody", topic: "views/api" },
    });
    expect([none.status, none.body.code]).toEqual([404, 112]);
    const v2 = await http(n1, "http_v2", "POST", "/api/v2/mqtt/subscribe", {
      body: { client_id: "c1", topic: "views/v2", qos: 0 },
    });
    expect(v2.body).toEqual({ code: 0, result: [] });
    expect(nodes[2].services.subscriptions.ofClient("c1").map((s) => s.topic)).toContain("views/v2");
  });

  it("kicks a client wherever it is", async () => {
    const [n1, n2] = nodes;
    const closed = new Promise<void>((r) => c.b3.once("close", () => r()));
    const a = await http(n1, "http", "DELETE", "/api/v4/clients/b3");
    expect(a.body).toEqual({ code: 0 });
    await closed;
    await until(() => n2.services.clients.lookup("b3").length === 0, "b3 gone from v2");
    const again = await http(n1, "http", "DELETE", "/api/v4/clients/b3");
    expect([again.status, again.body.code]).toEqual([404, 112]);
    delete placement.b3;
  });

  it("answers metrics, stats, brokers, nodes, plugins, listeners and alarms per node", async () => {
    const n1 = nodes[0];
    const m = (await get(n1, "/api/v4/metrics")).body.data;
    expect(m.map((x: { node: string }) => x.node)).toEqual(N);
    for (const x of m) expect(typeof x.metrics["messages.received"]).toBe("number");
    // Node 3's own counters: its client c1 received the publishes above.
    const m3 = (await get(n1, `/api/v4/nodes/${node(2)}/metrics`)).body.data;
    expect(m3["messages.delivered"]).toBeGreaterThan(0);
    const s = (await get(n1, "/api/v4/stats")).body.data;
    expect(s.map((x: { node: string }) => x.node)).toEqual(N);
    // v2 has 2 clients connected now (b3 was kicked).
    expect(s[1].stats["connections.count"]).toBe(nodes[1].services.metrics.stats()["connections.count"]);
    expect((await get(n1, `/api/v4/nodes/${node(1)}/stats`)).body.data["connections.count"]).toBe(
      nodes[1].services.metrics.stats()["connections.count"],
    );

    const brokers = (await get(nodes[1], "/api/v4/brokers")).body.data;
    expect(brokers.map((b: { node: string }) => b.node)).toEqual(N);
    const b3 = (await get(nodes[1], `/api/v4/brokers/${node(2)}`)).body.data;
    expect(b3).toMatchObject({ node_status: "Running" });
    expect(b3.node).toBeUndefined();
    const ns = (await get(nodes[1], "/api/v4/nodes")).body.data;
    expect(ns.map((x: { node: string; name: string }) => [x.node, x.name])).toEqual(N.map((n) => [n, n]));
    expect(ns.map((x: { connections: number }) => x.connections)).toEqual(
      nodes.map((n) => n.broker.sessions.connectedCount),
    );
    const one = (await get(nodes[1], `/api/v4/nodes/${node(0)}`)).body.data;
    expect(one.name).toBe(N[0]);
    expect(typeof one.memory_total).toBe("number");

    for (const path of ["/api/v4/plugins", "/api/v4/listeners", "/api/v4/alarms/present", "/api/v4/alarms/history"]) {
      const a = await get(n1, path);
      expect(a.status, path).toBe(200);
      expect(
        a.body.data.map((x: { node: string }) => x.node),
        path,
      ).toEqual(N);
    }
    const l3 = (await get(n1, `/api/v4/nodes/${node(2)}/listeners`)).body.data;
    expect(l3.map((l: { listen_on: string }) => l.listen_on)).toContain(`127.0.0.1:${nodes[2].port("tcp")}`);
    expect((await get(n1, `/api/v4/alarms/present/${node(2)}`)).status).toBe(200);
    expect(
      (await get(n1, `/api/v4/nodes/${node(2)}/plugins`)).body.data.map((p: { name: string }) => p.name),
    ).toContain("svc_retainer");

    // v2 forms keyed by node name
    const v2m = (await http(n1, "http_v2", "GET", "/api/v2/monitoring/metrics")).body.result;
    expect(Object.keys(v2m)).toEqual(N);
    const v2n = (await http(n1, "http_v2", "GET", "/api/v2/management/nodes")).body.result;
    expect(v2n.map((x: { name: string }) => x.name)).toEqual(N);
    expect((await http(n1, "http_v2", "GET", `/api/v2/monitoring/stats/${node(2)}`)).body.result).toHaveProperty(
      "clients/count",
    );
  });

  it("leaves out a node that does not answer, and a call to it answers 500 badrpc", async () => {
    // A node killed the hard way stays registered until its lease (10 s here) expires.
    const child = await startChildNode({
      "node.name": "k9@127.0.0.1",
      ...clusterSet(),
      "cluster.etcd.node_ttl": "10s",
    });
    const k9 = encodeURIComponent("k9@127.0.0.1");
    try {
      const n1 = nodes[0];
      await until(() => n1.cluster?.runningNodes().length === 4, "k9 up", 15_000);
      await until(async () => (await get(n1, "/api/v4/metrics")).body.data.length === 4, "k9 answers", 15_000);
      await child.kill();
      const a = await get(n1, `/api/v4/nodes/${k9}/metrics`);
      expect(n1.cluster?.runningNodes().map((r) => r.node)).toContain("k9@127.0.0.1");
      expect([a.status, a.body]).toEqual([500, { message: "badrpc" }]);
      expect((await get(n1, "/api/v4/metrics")).body.data.map((x: { node: string }) => x.node)).toEqual(N);
      expect(mine((await get(n1, "/api/v4/clients")).body.data).length).toBe(Object.keys(placement).length);
    } finally {
      await child.kill();
      child.cleanup();
    }
  }, 40_000);

  it("shows a closed node as stopped in cluster status, and forgets it on force-leave", async () => {
    const n1 = nodes[0];
    expect(await n1.services.cluster.status()).toEqual(
      expect.objectContaining({ running_nodes: expect.arrayContaining(N) }),
    );
    await clients.find((x) => x === c.c1)?.endAsync();
    clients.splice(clients.indexOf(c.c1), 1);
    const v3 = nodes.pop() as TestNode;
    await v3.close();
    await until(() => !n1.cluster?.runningNodes().some((r) => r.node === N[2]), "v3 down");
    const st = await n1.services.cluster.status();
    expect(st.running_nodes).not.toContain(N[2]);
    expect(st.stopped_nodes).toContain(N[2]);
    expect((await get(n1, "/api/v4/brokers")).body.data.map((b: { node: string }) => b.node)).not.toContain(N[2]);
    expect((await get(n1, `/api/v4/nodes/${node(2)}/metrics`)).status).toBe(404);
    expect(await n1.services.cluster.forceLeave(N[0])).toBe("running");
    expect(await n1.services.cluster.forceLeave(N[2])).toBe("ok");
    expect((await n1.services.cluster.status()).stopped_nodes).not.toContain(N[2]);
    expect(await n1.services.cluster.forceLeave(N[2])).toBe("not_found");
  });
});
