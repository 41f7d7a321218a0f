// Every v3 (and v4) resource answers the spec's exact field set and JSON types (spec 000 §2, §4),
// in-process through the node's Hono app, with real MQTT clients supplying the state.

import { describe, expect, it } from "vitest";
import { connect, expectShape, req, uid, useNode } from "./helpers.ts";
import {
  ACL_CACHE_ENTRY,
  CATALOGUE_ENTRY,
  CLIENT,
  LISTENER,
  METRIC_KEYS,
  NODE_INFO,
  NODE_INFO_LOOKUP,
  NODE_STATS,
  NODE_STATS_LOOKUP,
  PAGE_META,
  PLUGIN,
  ROUTE,
  STAT_NAMES,
  SUBSCRIPTION,
  TIMESTAMP,
} from "./spec-shapes.ts";

describe.each(["/api/v3", "/api/v4"])("resource shapes under %s", (base) => {
  const node = useNode();
  const get = (path: string) => req(node(), "GET", `${base}${path}`);
  const name = () => node().services.nodes.local;

  it("GET /brokers lists node info; /brokers/{node} omits node", async () => {
    const list = await get("/brokers");
    expect(list.status).toBe(200);
    expect(list.body.code).toBe(0);
    expect(list.body.data).toHaveLength(1);
    expectShape(list.body.data[0], NODE_INFO, "broker");
    expect(list.body.data[0]).toMatchObject({ node: name(), node_status: "Running", sysdescr: "svc" });
    expect(list.body.data[0].datetime).toMatch(TIMESTAMP);
    expect(list.body.data[0].otp_release).toMatch(/^Node\.js v\d+\./);
    const one = await get(`/brokers/${encodeURIComponent(name())}`);
    expectShape(one.body.data, NODE_INFO_LOOKUP, "broker lookup");
  });

  it("GET /nodes: memory with unit in the list, integers in the lookup, no node in the lookup", async () => {
    const c = await connect(node(), 4);
    const list = await get("/nodes");
    expectShape(list.body.data[0], NODE_STATS, "node");
    const n = list.body.data[0];
    expect(n.memory_total).toMatch(/^\d+(\.\d\d[KMG])?$/);
    expect(n.memory_used).toMatch(/^\d+(\.\d\d[KMG])?$/);
    expect(n.load1).toMatch(/^\d+\.\d\d$/);
    expect(n.connections).toBeGreaterThanOrEqual(1);
    expect(n.max_fds).toBeGreaterThan(0);
    expect(n.process_used).toBeGreaterThan(0);
    expect(n.process_available).toBeGreaterThanOrEqual(n.process_used);
    const one = await get(`/nodes/${name()}`);
    expectShape(one.body.data, NODE_STATS_LOOKUP, "node lookup");
    expect(one.body.data.memory_total).toBeGreaterThan(0);
    expect(one.body.data.memory_used).toBeGreaterThan(0);
    await c.c.endAsync();
  });

  it("GET /clients and every client lookup answer the Client table", async () => {
    const c = await connect(node(), 5, { username: "shape-user", keepalive: 42 });
    await c.c.subscribeAsync(`shape/${uid()}`, { qos: 1 });
    const list = await get("/clients");
    expectShape(list.body.meta, PAGE_META, "meta");
    const mine = list.body.data.find((x: { clientid: string }) => x.clientid === c.id);
    expectShape(mine, CLIENT, "client");
    expect(mine).toMatchObject({
      username: "shape-user",
      node: name(),
      proto_name: "MQTT",
      proto_ver: 5,
      keepalive: 42,
      connected: true,
      clean_start: true,
      ip_address: "127.0.0.1",
      zone: "external",
      subscriptions_cnt: 1,
    });
    expect(mine.created_at).toMatch(TIMESTAMP);
    expect(mine.connected_at).toMatch(TIMESTAMP);
    expect(mine.recv_pkt).toBeGreaterThanOrEqual(2);
    expect(mine.send_oct).toBeGreaterThan(0);
    for (const path of [
      `/clients/${c.id}`,
      `/nodes/${name()}/clients/${c.id}`,
      "/clients/username/shape-user",
      `/nodes/${name()}/clients/username/shape-user`,
    ]) {
      const a = await get(path);
      expect(a.status, path).toBe(200);
      expect(a.body.data, path).toHaveLength(1);
      expectShape(a.body.data[0], CLIENT, path);
    }
    const nodeList = await get(`/nodes/${name()}/clients`);
    expectShape(nodeList.body.meta, PAGE_META);
    expect(nodeList.body.data.some((x: { clientid: string }) => x.clientid === c.id)).toBe(true);
    expect((await get("/clients/nobody-here")).body).toEqual({ code: 0, data: [] });
    expect((await get("/clients/username/nobody-here")).body).toEqual({ code: 0, data: [] });
    await c.c.endAsync();
  });

  it("GET /clients/{clientid}/acl_cache: an array of ACL cache entries (empty until ACL lands)", async () => {
    const c = await connect(node(), 4);
    const a = await get(`/clients/${c.id}/acl_cache`);
    expect(a.status).toBe(200);
    expect(a.body).toEqual({ code: 0, data: [] });
    for (const e of a.body.data) expectShape(e, ACL_CACHE_ENTRY);
    const del = await req(node(), "DELETE", `${base}/clients/${c.id}/acl_cache`);
    expect(del.body).toEqual({ code: 0 });
    await c.c.endAsync();
  });

  it("GET /subscriptions and its forms answer {clientid, node, qos, topic}", async () => {
    const c = await connect(node(), 4);
    const topic = `shape/${uid()}/+`;
    await c.c.subscribeAsync(topic, { qos: 2 });
    const list = await get("/subscriptions");
    expectShape(list.body.meta, PAGE_META);
    const mine = list.body.data.filter((x: { clientid: string }) => x.clientid === c.id);
    expect(mine).toEqual([{ clientid: c.id, node: name(), qos: 2, topic }]);
    for (const s of list.body.data) expectShape(s, SUBSCRIPTION);
    for (const path of [`/subscriptions/${c.id}`, `/nodes/${name()}/subscriptions/${c.id}`]) {
      const a = await get(path);
      expect(a.body.data, path).toEqual([{ clientid: c.id, node: name(), qos: 2, topic }]);
    }
    const nodeList = await get(`/nodes/${name()}/subscriptions`);
    expectShape(nodeList.body.meta, PAGE_META);
    expect(nodeList.body.data).toContainEqual({ clientid: c.id, node: name(), qos: 2, topic });
    await c.c.endAsync();
  });

  it("GET /routes and /routes/{topic} answer {node, topic}", async () => {
    const c = await connect(node(), 4);
    const topic = `route/${uid()}`;
    await c.c.subscribeAsync(topic);
    const list = await get("/routes");
    expectShape(list.body.meta, PAGE_META);
    for (const r of list.body.data) expectShape(r, ROUTE);
    expect(list.body.data).toContainEqual({ node: name(), topic });
    const one = await get(`/routes/${encodeURIComponent(topic)}`);
    expect(one.body).toEqual({ code: 0, data: [{ node: name(), topic }] });
    expect((await get(`/routes/${encodeURIComponent("no/such/route")}`)).body).toEqual({ code: 0, data: [] });
    await c.c.endAsync();
  });

  it("GET /plugins is [{node, plugins}]; the node form is the bare list", async () => {
    const all = await get("/plugins");
    expect(all.body.data).toHaveLength(1);
    expectShape(all.body.data[0], { node: "string", plugins: "array" });
    for (const p of all.body.data[0].plugins) expectShape(p, PLUGIN);
    expect(all.body.data[0].plugins).toContainEqual(expect.objectContaining({ name: "svc_retainer", active: true }));
    const one = await get(`/nodes/${name()}/plugins`);
    expect(one.body.data).toEqual(all.body.data[0].plugins);
    for (const p of one.body.data) expect(["auth", "bridge", "protocol", "feature"]).toContain(p.type);
  });

  it("GET /listeners is [{node, listeners}] with MQTT and management listeners", async () => {
    const all = await get("/listeners");
    expectShape(all.body.data[0], { node: "string", listeners: "array" });
    const ls = all.body.data[0].listeners;
    for (const l of ls) expectShape(l, LISTENER);
    const protocols = ls.map((l: { protocol: string }) => l.protocol);
    expect(protocols).toEqual(expect.arrayContaining(["mqtt:tcp", "mqtt:ws", "http:management"]));
    expect(protocols.filter((p: string) => p === "http:management")).toHaveLength(2);
    const tcp = ls.find((l: { protocol: string }) => l.protocol === "mqtt:tcp");
    expect(tcp.listen_on).toBe(`127.0.0.1:${node().port("tcp")}`);
    const one = await get(`/nodes/${name()}/listeners`);
    expect(one.body.data.map((l: { protocol: string }) => l.protocol)).toEqual(protocols);
  });

  it("GET /metrics and /nodes/{node}/metrics: every spec metric key, integers", async () => {
    const all = await get("/metrics");
    expectShape(all.body.data[0], { node: "string", metrics: "object" });
    const one = await get(`/nodes/${name()}/metrics`);
    for (const m of [all.body.data[0].metrics, one.body.data]) {
      for (const k of METRIC_KEYS) expect(Number.isInteger(m[k]), k).toBe(true);
      for (const v of Object.values(m)) expect(Number.isInteger(v)).toBe(true);
    }
  });

  it("GET /stats and /nodes/{node}/stats: `.count` and `.max` of every statistic, integers", async () => {
    const c = await connect(node(), 4);
    const all = await get("/stats");
    expectShape(all.body.data[0], { node: "string", stats: "object" });
    const one = await get(`/nodes/${name()}/stats`);
    for (const st of [all.body.data[0].stats, one.body.data]) {
      for (const n of STAT_NAMES) {
        expect(Number.isInteger(st[`${n}.count`]), `${n}.count`).toBe(true);
        expect(Number.isInteger(st[`${n}.max`]), `${n}.max`).toBe(true);
      }
    }
    expect(one.body.data["connections.count"]).toBeGreaterThanOrEqual(1);
    await c.c.endAsync();
  });

  it("GET /alarms/present|history and their node forms", async () => {
    const alarms = node().sys.alarms;
    const id = `test_alarm_${uid()}`;
    alarms.activate(id, "raised by a test");
    const present = await get("/alarms/present");
    expectShape(present.body.data[0], { node: "string", alarms: "array" });
    expect(present.body.data[0].alarms).toContainEqual(expect.objectContaining({ id, desc: "raised by a test" }));
    const presentNode = await get(`/alarms/present/${name()}`);
    expect(presentNode.body.data).toEqual(present.body.data[0].alarms);
    alarms.deactivate(id);
    const history = await get("/alarms/history");
    const entry = history.body.data[0].alarms.find((a: { id: string }) => a.id === id);
    expectShape(entry, { id: "string", desc: "string", clear_at: "string" });
    expect(entry.clear_at).toMatch(TIMESTAMP);
    const historyNode = await get(`/alarms/history/${name()}`);
    expect(historyNode.body.data).toEqual(history.body.data[0].alarms);
    expect((await get(`/alarms/present/${name()}`)).body.data.some((a: { id: string }) => a.id === id)).toBe(false);
  });

  it("GET / is the catalogue {name, method, path, descr}", async () => {
    for (const path of ["/", ""]) {
      const a = await get(path);
      expect(a.status).toBe(200);
      for (const e of a.body.data) expectShape(e, CATALOGUE_ENTRY);
    }
  });
});
