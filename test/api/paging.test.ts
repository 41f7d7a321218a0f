// Pagination (`_page`, `_limit`; emqx-facts §3.2: defaults 1 and management.max_row_limit, both
// validated: 400 code 108), the `/clients` and `/subscriptions` filters, and 404 for unknown
// nodes, objects and routes.

import { describe, expect, it } from "vitest";
import { connect, expectError, offline, persistent, req, uid, useNode } from "./helpers.ts";

describe("pagination, filters, 404s", () => {
  const node = useNode({ "management.max_row_limit": "50" });
  const get = (path: string) => req(node(), "GET", `/api/v3${path}`);
  const name = () => node().services.nodes.local;

  it("_page / _limit slice the list; meta = {page, limit, count}; defaults 1 and max_row_limit", async () => {
    const tag = uid("pg");
    const cs = [];
    for (let i = 0; i < 5; i++) cs.push(await connect(node(), 4, { clientId: `${tag}-${i}` }));
    const filter = `_like_clientid=${tag}`;
    const all = await get(`/clients?${filter}`);
    expect(all.body.meta).toEqual({ page: 1, limit: 50, count: 5 });
    expect(all.body.data.map((c: { clientid: string }) => c.clientid)).toEqual(cs.map((c) => c.id));
    const p2 = await get(`/clients?${filter}&_page=2&_limit=2`);
    expect(p2.body.meta).toEqual({ page: 2, limit: 2, count: 5 });
    expect(p2.body.data.map((c: { clientid: string }) => c.clientid)).toEqual([cs[2].id, cs[3].id]);
    const p3 = await get(`/clients?${filter}&_page=3&_limit=2`);
    expect(p3.body.data.map((c: { clientid: string }) => c.clientid)).toEqual([cs[4].id]);
    const beyond = await get(`/clients?${filter}&_page=9&_limit=2`);
    expect(beyond.body).toEqual({ code: 0, data: [], meta: { page: 9, limit: 2, count: 5 } });
    const max = await get(`/clients?${filter}&_limit=50`);
    expect(max.body.meta.limit).toBe(50);
  });

  it.each(["_page=0", "_page=-1", "_page=abc", "_page=1.5", "_limit=0", "_limit=51", "_limit=x", "_page="])(
    "/clients?%s answers 400 code 108",
    async (q) => {
      expectError(await get(`/clients?${q}`), 400, 108);
    },
  );

  it("pagination bounds hold on every paginated list", async () => {
    for (const path of [
      "/clients",
      `/nodes/${name()}/clients`,
      "/subscriptions",
      `/nodes/${name()}/subscriptions`,
      "/routes",
    ]) {
      expectError(await get(`${path}?_limit=51`), 400, 108);
      const ok = await get(`${path}?_page=1&_limit=1`);
      expect(ok.body.meta, path).toMatchObject({ page: 1, limit: 1 });
      expect(ok.body.data.length, path).toBeLessThanOrEqual(1);
    }
  });

  it("/clients filters: exact, fuzzy, state, protocol and ranges", async () => {
    const tag = uid("f");
    const a = await connect(node(), 5, { clientId: `${tag}-a`, username: `${tag}-alice` });
    const b = await connect(node(), 4, { clientId: `${tag}-b`, username: `${tag}-bob`, ...persistent(4) });
    const parked = `${tag}-p`;
    const p = await connect(node(), 5, { clientId: parked, ...persistent(5) });
    await p.c.endAsync();
    await offline(node(), parked);
    const ids = async (q: string) =>
      ((await get(`/clients?_like_clientid=${tag}&${q}`)).body.data as { clientid: string }[])
        .map((c) => c.clientid)
        .sort();
    expect(await ids(`clientid=${a.id}`)).toEqual([a.id]);
    expect(await ids(`username=${tag}-bob`)).toEqual([b.id]);
    expect(await ids(`_like_username=alic`)).toEqual([a.id]);
    expect(await ids("conn_state=connected")).toEqual([a.id, b.id]);
    expect(await ids("conn_state=disconnected")).toEqual([parked]);
    expect(await ids("conn_state=idle")).toEqual([]);
    expect(await ids("proto_ver=4")).toEqual([b.id]);
    expect(await ids("proto_name=MQTT")).toEqual([a.id, b.id, parked]);
    expect(await ids("clean_start=false")).toEqual([b.id, parked]);
    expect(await ids("clean_start=true")).toEqual([a.id]);
    expect(await ids("zone=external&ip_address=127.0.0.1")).toEqual([a.id, b.id, parked]);
    expect(await ids("zone=internal")).toEqual([]);
    const now = Math.floor(Date.now() / 1000);
    expect(await ids(`_gte_created_at=${now - 60}&_lte_created_at=${now + 60}`)).toEqual([a.id, b.id, parked]);
    expect(await ids(`_gte_connected_at=${now + 3600}`)).toEqual([]);
    expect(await ids("_gte_mqueue_len=0&_lte_mqueue_len=0&_lte_mqueue_dropped=0")).toEqual([a.id, b.id, parked]);
    expect(await ids("_gte_mqueue_len=1")).toEqual([]);
    const nodeScoped = await get(`/nodes/${name()}/clients?_like_clientid=${tag}&proto_ver=5`);
    expect(nodeScoped.body.data.map((c: { clientid: string }) => c.clientid).sort()).toEqual([a.id, parked].sort());
    for (const bad of [
      "proto_ver=x",
      "clean_start=maybe",
      "conn_state=asleep",
      "_gte_created_at=yesterday",
      "_lte_mqueue_len=-1",
    ])
      expectError(await get(`/clients?${bad}`), 400, 108);
    node().services.clients.kick(parked);
  });

  it("/subscriptions filters: clientid, topic, qos, share, _match_topic", async () => {
    const tag = uid("sf");
    const c = await connect(node(), 5);
    await c.c.subscribeAsync(`${tag}/+/temp`, { qos: 1 });
    await c.c.subscribeAsync(`$share/g1/${tag}/jobs`, { qos: 2 });
    await c.c.subscribeAsync(`${tag}/exact`, { qos: 0 });
    const topics = async (q: string) =>
      ((await get(`/subscriptions?clientid=${c.id}&${q}`)).body.data as { topic: string }[]).map((s) => s.topic).sort();
    expect(await topics("")).toEqual([`$share/g1/${tag}/jobs`, `${tag}/+/temp`, `${tag}/exact`].sort());
    expect(await topics("qos=1")).toEqual([`${tag}/+/temp`]);
    expect(await topics(`topic=${encodeURIComponent(`${tag}/jobs`)}`)).toEqual([`$share/g1/${tag}/jobs`]);
    expect(await topics(`topic=${encodeURIComponent(`${tag}/exact`)}`)).toEqual([`${tag}/exact`]);
    expect(await topics("share=g1")).toEqual([`$share/g1/${tag}/jobs`]);
    expect(await topics(`_match_topic=${encodeURIComponent(`${tag}/kitchen/temp`)}`)).toEqual([`${tag}/+/temp`]);
    const nodeScoped = await get(`/nodes/${name()}/subscriptions?clientid=${c.id}&qos=2`);
    expect(nodeScoped.body.data).toEqual([{ clientid: c.id, node: name(), qos: 2, topic: `$share/g1/${tag}/jobs` }]);
    expectError(await get("/subscriptions?qos=3"), 400, 108);
    expectError(await get("/subscriptions?qos=one"), 400, 108);
  });

  it("every node-scoped form answers 404 for an unknown node", async () => {
    const paths = [
      "/brokers/nobody@nowhere",
      "/nodes/nobody@nowhere",
      "/nodes/nobody@nowhere/clients",
      "/nodes/nobody@nowhere/clients/x",
      "/nodes/nobody@nowhere/clients/username/x",
      "/nodes/nobody@nowhere/subscriptions",
      "/nodes/nobody@nowhere/subscriptions/x",
      "/nodes/nobody@nowhere/plugins",
      "/nodes/nobody@nowhere/listeners",
      "/nodes/nobody@nowhere/metrics",
      "/nodes/nobody@nowhere/stats",
      "/alarms/present/nobody@nowhere",
      "/alarms/history/nobody@nowhere",
    ];
    for (const p of paths) expectError(await get(p), 404, 404);
    expectError(await req(node(), "PUT", "/api/v3/nodes/nobody@nowhere/plugins/svc_retainer/load"), 404, 404);
    for (const p of [
      "/management/nodes/nobody@nowhere",
      "/monitoring/nodes/nobody@nowhere",
      "/nodes/nobody@nowhere/clients",
      "/nodes/nobody@nowhere/sessions",
      "/nodes/nobody@nowhere/subscriptions",
      "/nodes/nobody@nowhere/plugins",
      "/monitoring/listeners/nobody@nowhere",
      "/monitoring/metrics/nobody@nowhere",
      "/monitoring/stats/nobody@nowhere",
    ])
      expectError(await req(node(), "GET", `/api/v2${p}`), 404, 404);
  });

  it("unknown routes answer 404 JSON; unknown clients 112 on kick and ACL cache", async () => {
    for (const p of ["/api/v3/no/such/thing", "/api/v4/clientz", "/api/v2/nothing", "/api/v5/brokers", "/nope"])
      expectError(await req(node(), "GET", p), 404, 404);
    expectError(await req(node(), "DELETE", "/api/v3/clients/never-connected"), 404, 112);
    expectError(await get("/clients/never-connected/acl_cache"), 404, 112);
    expectError(await req(node(), "DELETE", "/api/v3/clients/never-connected/acl_cache"), 404, 112);
  });
});
