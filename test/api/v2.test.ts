// The legacy v2 API (spec 001): every endpoint's envelope `{code, result}`, field names and types,
// its paging, slash-separated metric keys, and v2 beside v3 on the same broker state.

import { describe, expect, it } from "vitest";
import { connect, expectShape, offline, persistent, req, uid, useNode, waitUntil } from "./helpers.ts";
import {
  CLIENT,
  TIMESTAMP,
  V2_CLIENT,
  V2_LISTENER,
  V2_METRIC_KEYS,
  V2_NODE_INFO,
  V2_NODE_INFO_LOOKUP,
  V2_NODE_STATS,
  V2_PAGE,
  V2_PLUGIN,
  V2_ROUTE,
  V2_SESSION,
  V2_STAT_KEYS,
  V2_SUBSCRIPTION,
} from "./spec-shapes.ts";

describe("v2 API", () => {
  const node = useNode();
  const get = (path: string) => req(node(), "GET", `/api/v2${path}`);
  const name = () => node().services.nodes.local;

  it("management/nodes: node info, `name` in the list only", async () => {
    const list = await get("/management/nodes");
    expect(list.body.code).toBe(0);
    expectShape(list.body.result[0], V2_NODE_INFO, "node info");
    expect(list.body.result[0].name).toBe(name());
    const one = await get(`/management/nodes/${name()}`);
    expectShape(one.body.result, V2_NODE_INFO_LOOKUP, "node info lookup");
    expect(one.body.result.datetime).toMatch(TIMESTAMP);
  });

  it("monitoring/nodes: node statistics, memory with unit, clients count", async () => {
    const c = await connect(node(), 4);
    const list = await get("/monitoring/nodes");
    expectShape(list.body.result[0], V2_NODE_STATS, "node stats");
    expect(list.body.result[0].memory_total).toMatch(/^\d+(\.\d\d[KMG])?$/);
    expect(list.body.result[0].clients).toBeGreaterThanOrEqual(1);
    const one = await get(`/monitoring/nodes/${name()}`);
    expectShape(one.body.result, V2_NODE_STATS, "node stats lookup");
    await c.c.endAsync();
  });

  it("clients: page of client_id/ipaddress/clean_sess records, lookups as {objects}", async () => {
    const c = await connect(node(), 4, { username: "v2user", keepalive: 33 });
    const page = await get(`/nodes/${name()}/clients`);
    expectShape(page.body.result, V2_PAGE, "page");
    const mine = page.body.result.objects.find((x: { client_id: string }) => x.client_id === c.id);
    expectShape(mine, V2_CLIENT, "client");
    expect(mine).toMatchObject({
      username: "v2user",
      ipaddress: "127.0.0.1",
      clean_sess: true,
      proto_ver: 4,
      keepalive: 33,
    });
    expect(mine.connected_at).toMatch(TIMESTAMP);
    for (const path of [`/clients/${c.id}`, `/nodes/${name()}/clients/${c.id}`]) {
      const a = await get(path);
      expect(Object.keys(a.body.result), path).toEqual(["objects"]);
      expect(a.body.result.objects, path).toEqual([mine]);
    }
    expect((await get("/clients/nobody")).body).toEqual({ code: 0, result: { objects: [] } });
    await c.c.endAsync();
  });

  it("absent values read `undefined`", async () => {
    const c = await connect(node(), 4);
    const a = await get(`/clients/${c.id}`);
    expect(a.body.result.objects[0].username).toBe("undefined");
    await c.c.endAsync();
  });

  it("sessions: page and lookups with the v2 session fields", async () => {
    const id = uid("s");
    const c = await connect(node(), 4, { clientId: id, ...persistent(4) });
    await c.c.subscribeAsync(`v2s/${id}`, { qos: 1 });
    const page = await get(`/nodes/${name()}/sessions`);
    expectShape(page.body.result, V2_PAGE);
    const mine = page.body.result.objects.find((x: { client_id: string }) => x.client_id === id);
    expectShape(mine, V2_SESSION, "session");
    expect(mine).toMatchObject({ clean_sess: false, inflight_queue: 0, message_queue: 0, awaiting_rel: 0 });
    expect(mine.created_at).toMatch(TIMESTAMP);
    await c.c.endAsync();
    await offline(node(), id);
    // A parked session is still listed; QoS 1 messages queue for it.
    node().services.publish.publish({ topic: `v2s/${id}`, payload: "queued", qos: 1 });
    for (const path of [`/sessions/${id}`, `/nodes/${name()}/sessions/${id}`]) {
      const a = await get(path);
      expect(a.body.result.objects, path).toHaveLength(1);
      expectShape(a.body.result.objects[0], V2_SESSION);
      expect(a.body.result.objects[0].message_queue).toBe(1);
    }
    expect((await get("/sessions/nobody")).body).toEqual({ code: 0, result: { objects: [] } });
    node().services.clients.kick(id);
  });

  it("subscriptions and routes", async () => {
    const c = await connect(node(), 4);
    const topic = `v2/${uid()}`;
    await c.c.subscribeAsync(topic, { qos: 1 });
    const page = await get(`/nodes/${name()}/subscriptions`);
    expectShape(page.body.result, V2_PAGE);
    for (const s of page.body.result.objects) expectShape(s, V2_SUBSCRIPTION);
    expect(page.body.result.objects).toContainEqual({ client_id: c.id, topic, qos: 1 });
    for (const path of [`/subscriptions/${c.id}`, `/nodes/${name()}/subscriptions/${c.id}`])
      expect((await get(path)).body, path).toEqual({
        code: 0,
        result: { objects: [{ client_id: c.id, topic, qos: 1 }] },
      });
    const routes = await get("/routes");
    expectShape(routes.body.result, V2_PAGE);
    for (const r of routes.body.result.objects) expectShape(r, V2_ROUTE);
    expect(routes.body.result.objects).toContainEqual({ topic, node: name() });
    expect((await get(`/routes/${encodeURIComponent(topic)}`)).body).toEqual({
      code: 0,
      result: { objects: [{ topic, node: name() }] },
    });
    await c.c.endAsync();
  });

  it("curr_page / page_size: total_num, total_page and the slice", async () => {
    const clients = [];
    for (let i = 0; i < 3; i++) clients.push(await connect(node(), 4));
    const total = node().services.clients.list().length;
    const a = await get(`/nodes/${name()}/clients?curr_page=2&page_size=2`);
    expect(a.body.result).toMatchObject({
      current_page: 2,
      page_size: 2,
      total_num: total,
      total_page: Math.ceil(total / 2),
    });
    expect(a.body.result.objects).toHaveLength(Math.min(2, total - 2));
    const dflt = await get(`/nodes/${name()}/clients`);
    expect(dflt.body.result).toMatchObject({ current_page: 1, page_size: 10000, total_num: total });
    for (const bad of ["curr_page=0", "page_size=0", "page_size=x", "page_size=10001"]) {
      const r = await get(`/nodes/${name()}/clients?${bad}`);
      expect({ status: r.status, code: r.body.code }, bad).toEqual({ status: 400, code: 108 });
    }
    for (const c of clients) await c.c.endAsync();
  });

  it("plugins: list and PUT with active", async () => {
    const list = await get(`/nodes/${name()}/plugins`);
    for (const p of list.body.result) expectShape(p, V2_PLUGIN);
    const put = (active: unknown) =>
      req(node(), "PUT", `/api/v2/nodes/${name()}/plugins/svc_retainer`, { body: { active } });
    expect((await put(false)).body).toEqual({ code: 0, result: [] });
    expect(node().plugins.isActive("svc_retainer")).toBe(false);
    const again = await put(false);
    expect({ status: again.status, code: again.body.code }).toEqual({ status: 409, code: 111 });
    expect((await put(true)).body).toEqual({ code: 0, result: [] });
    expect(node().plugins.isActive("svc_retainer")).toBe(true);
    const loaded = await put(true);
    expect({ status: loaded.status, code: loaded.body.code }).toEqual({ status: 409, code: 110 });
    const missing = await req(node(), "PUT", `/api/v2/nodes/${name()}/plugins/svc_retainer`, { body: {} });
    expect({ status: missing.status, code: missing.body.code }).toEqual({ status: 400, code: 107 });
    const typed = await put("yes");
    expect({ status: typed.status, code: typed.body.code }).toEqual({ status: 400, code: 108 });
    const unknown = await req(node(), "PUT", `/api/v2/nodes/${name()}/plugins/svc_nope`, { body: { active: true } });
    expect(unknown.status).toBe(404);
  });

  it("monitoring/listeners: keyed by node, v2 listener fields", async () => {
    const all = await get("/monitoring/listeners");
    expect(Object.keys(all.body.result)).toEqual([name()]);
    for (const l of all.body.result[name()]) expectShape(l, V2_LISTENER, "listener");
    const one = await get(`/monitoring/listeners/${name()}`);
    expect(one.body.result).toEqual(all.body.result[name()]);
  });

  it("monitoring/listeners: shutdown_count is an array of {reason: n}", async () => {
    const c = await connect(node(), 4);
    await c.c.endAsync();
    await waitUntil(
      () =>
        node()
          .listenerInfo()
          .some((l) => !Array.isArray(l.shutdown_count)),
      "a counted close",
    );
    const one = await get(`/monitoring/listeners/${name()}`);
    const tcp = one.body.result.find((l: { protocol: string }) => l.protocol === "mqtt:tcp");
    expect(Array.isArray(tcp.shutdown_count)).toBe(true);
    expect(tcp.shutdown_count.length).toBeGreaterThan(0);
    for (const e of tcp.shutdown_count) expect(Object.values(e).every((v) => Number.isInteger(v))).toBe(true);
  });

  it("monitoring/metrics and monitoring/stats: slash-separated keys, integers", async () => {
    const all = await get("/monitoring/metrics");
    const one = await get(`/monitoring/metrics/${name()}`);
    for (const m of [all.body.result[name()], one.body.result]) {
      expect(Object.keys(m).sort()).toEqual([...V2_METRIC_KEYS].sort());
      for (const v of Object.values(m)) expect(Number.isInteger(v)).toBe(true);
    }
    const stats = await get("/monitoring/stats");
    const st = await get(`/monitoring/stats/${name()}`);
    for (const s of [stats.body.result[name()], st.body.result]) {
      expect(Object.keys(s).sort()).toEqual([...V2_STAT_KEYS].sort());
      for (const v of Object.values(s)) expect(Number.isInteger(v)).toBe(true);
    }
  });

  it("v2 and v3 side by side show the same broker state", async () => {
    const c = await connect(node(), 5, { username: "both" });
    const topic = `both/${uid()}`;
    await c.c.subscribeAsync(topic, { qos: 2 });
    const v3 = await req(node(), "GET", `/api/v3/clients/${c.id}`);
    const v2 = await get(`/clients/${c.id}`);
    expectShape(v3.body.data[0], CLIENT);
    const a = v3.body.data[0];
    const b = v2.body.result.objects[0];
    expect(b).toEqual({
      client_id: a.clientid,
      username: a.username,
      ipaddress: a.ip_address,
      port: a.port,
      clean_sess: a.clean_start,
      proto_ver: a.proto_ver,
      keepalive: a.keepalive,
      connected_at: a.connected_at,
    });
    const s3 = await req(node(), "GET", `/api/v3/subscriptions/${c.id}`);
    const s2 = await get(`/subscriptions/${c.id}`);
    expect(s2.body.result.objects).toEqual(
      s3.body.data.map((s: { clientid: string; topic: string; qos: number }) => ({
        client_id: s.clientid,
        topic: s.topic,
        qos: s.qos,
      })),
    );
    const m3 = (await req(node(), "GET", `/api/v3/nodes/${name()}/metrics`)).body.data;
    const m2 = (await get(`/monitoring/metrics/${name()}`)).body.result;
    expect(m2["packets/connect"]).toBe(m3["packets.connect.received"]);
    expect(m2["bytes/received"]).toBeGreaterThan(0);
    const st3 = (await req(node(), "GET", `/api/v3/nodes/${name()}/stats`)).body.data;
    const st2 = (await get(`/monitoring/stats/${name()}`)).body.result;
    expect(st2["clients/count"]).toBe(st3["connections.count"]);
    expect(st2["subscriptions/count"]).toBe(st3["subscriptions.count"]);
    // A kick through v2 is seen by v3.
    expect((await req(node(), "DELETE", `/api/v2/clients/${c.id}`)).body).toEqual({ code: 0, result: [] });
    await c.closed;
    await offline(node(), c.id);
    expect((await req(node(), "GET", `/api/v3/clients/${c.id}`)).body.data).toEqual([]);
    const gone = await req(node(), "DELETE", `/api/v2/clients/${c.id}`);
    expect({ status: gone.status, code: gone.body.code }).toEqual({ status: 404, code: 112 });
  });

  it("mqtt/publish|subscribe|unsubscribe answer result []", async () => {
    const c = await connect(node(), 4);
    const topic = `v2pub/${uid()}`;
    const post = (p: string, body: unknown) => req(node(), "POST", `/api/v2/mqtt/${p}`, { body });
    expect((await post("subscribe", { topic, qos: 1, client_id: c.id })).body).toEqual({ code: 0, result: [] });
    expect((await post("publish", { topic, payload: "hello v2", qos: 1, client_id: "api-v2" })).body).toEqual({
      code: 0,
      result: [],
    });
    const m = await c.inbox.next();
    expect([m.topic, m.payload, m.packet.qos]).toEqual([topic, "hello v2", 1]);
    expect((await post("unsubscribe", { topic, client_id: c.id })).body).toEqual({ code: 0, result: [] });
    expect(node().services.subscriptions.ofClient(c.id)).toEqual([]);
    await c.c.endAsync();
  });
});
