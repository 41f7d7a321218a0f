// The catalogue `GET /api/v3/` (and v4) is generated from the route table: it lists every
// endpoint served (each listed route answers, none falls through to "Not found"), the same table
// produces the OpenAPI document, and it covers the spec's v3 endpoints (spec 000 §4) that this
// issue serves.

import { describe, expect, it } from "vitest";
import { req, useNode } from "./helpers.ts";

/** Spec 000 §4 endpoints (method path), without the rule engine, bans and auth plugins. */
const SPEC_V3 = [
  "GET /brokers",
  "GET /brokers/{node}",
  "GET /nodes",
  "GET /nodes/{node}",
  "GET /clients",
  "GET /nodes/{node}/clients",
  "GET /clients/{clientid}",
  "GET /nodes/{node}/clients/{clientid}",
  "GET /clients/username/{username}",
  "GET /nodes/{node}/clients/username/{username}",
  "DELETE /clients/{clientid}",
  "GET /clients/{clientid}/acl_cache",
  "DELETE /clients/{clientid}/acl_cache",
  "GET /subscriptions",
  "GET /subscriptions/{clientid}",
  "GET /nodes/{node}/subscriptions",
  "GET /nodes/{node}/subscriptions/{clientid}",
  "GET /routes",
  "GET /routes/{topic}",
  "POST /mqtt/publish",
  "POST /mqtt/subscribe",
  "POST /mqtt/unsubscribe",
  "POST /mqtt/publish_batch",
  "POST /mqtt/subscribe_batch",
  "POST /mqtt/unsubscribe_batch",
  "GET /plugins",
  "GET /nodes/{node}/plugins",
  "PUT /nodes/{node}/plugins/{plugin}/load",
  "PUT /nodes/{node}/plugins/{plugin}/unload",
  "PUT /nodes/{node}/plugins/{plugin}/reload",
  "PUT /plugins/{plugin}/unload",
  "PUT /plugins/{plugin}/reload",
  "GET /listeners",
  "GET /nodes/{node}/listeners",
  "GET /metrics",
  "GET /nodes/{node}/metrics",
  "GET /stats",
  "GET /nodes/{node}/stats",
  "GET /alarms/present",
  "GET /alarms/present/{node}",
  "GET /alarms/history",
  "GET /alarms/history/{node}",
  "POST /auth",
  "GET /users",
  "POST /users",
  "PUT /users/{name}",
  "DELETE /users/{name}",
  "PUT /change_pwd/{username}",
  "GET /apps",
  "POST /apps",
  "GET /apps/{appid}",
  "PUT /apps/{appid}",
  "DELETE /apps/{appid}",
  "GET /",
];

/** Spec 001 §4, every v2 endpoint. */
const SPEC_V2 = [
  "GET /management/nodes",
  "GET /management/nodes/{node_name}",
  "GET /monitoring/nodes",
  "GET /monitoring/nodes/{node_name}",
  "GET /nodes/{node_name}/clients",
  "GET /nodes/{node_name}/clients/{client_id}",
  "GET /clients/{client_id}",
  "DELETE /clients/{client_id}",
  "GET /nodes/{node_name}/sessions",
  "GET /nodes/{node_name}/sessions/{client_id}",
  "GET /sessions/{client_id}",
  "GET /nodes/{node_name}/subscriptions",
  "GET /nodes/{node_name}/subscriptions/{client_id}",
  "GET /subscriptions/{client_id}",
  "GET /routes",
  "GET /routes/{topic}",
  "POST /mqtt/publish",
  "POST /mqtt/subscribe",
  "POST /mqtt/unsubscribe",
  "GET /nodes/{node_name}/plugins",
  "PUT /nodes/{node_name}/plugins/{plugin_name}",
  "GET /monitoring/listeners",
  "GET /monitoring/listeners/{node_name}",
  "GET /monitoring/metrics",
  "GET /monitoring/metrics/{node_name}",
  "GET /monitoring/stats",
  "GET /monitoring/stats/{node_name}",
];

describe("catalogue", () => {
  const node = useNode();
  const key = (e: { method: string; path: string }) => `${e.method} ${e.path}`;

  it("GET /api/v3/ and /api/v4/ list the route table", async () => {
    const v3 = await req(node(), "GET", "/api/v3/");
    const v4 = await req(node(), "GET", "/api/v4/");
    expect(v3.body.code).toBe(0);
    expect(v3.body.data).toEqual(node().api.catalogue.v3);
    expect(v4.body.data).toEqual(v3.body.data);
    const keys = v3.body.data.map(key);
    expect(new Set(keys).size).toBe(keys.length);
    expect(new Set(v3.body.data.map((e: { name: string }) => e.name)).size).toBe(keys.length);
  });

  it("covers the spec's v3 endpoints and every v2 endpoint", () => {
    expect(node().api.catalogue.v3.map(key)).toEqual(expect.arrayContaining(SPEC_V3));
    expect(node().api.catalogue.v2.map(key).sort()).toEqual([...SPEC_V2].sort());
  });

  it("the OpenAPI document describes exactly the catalogue's JSON routes", async () => {
    const doc = (await req(node(), "GET", "/api/v4/openapi.json", { auth: null })).body;
    const documented: string[] = [];
    for (const [path, ops] of Object.entries(doc.paths as Record<string, Record<string, unknown>>))
      for (const m of Object.keys(ops)) documented.push(`${m.toUpperCase()} ${path}`);
    const listed = node()
      .api.catalogue.v3.filter((e) => e.name !== "openapi")
      .map(key);
    expect(documented.sort()).toEqual(listed.sort());
  });

  it.each(["v2", "v3", "v4"] as const)(
    "every %s catalogue entry is served (none falls through to Not found)",
    async (v) => {
      const fill = (path: string) =>
        path
          .replace(/\{node(_name)?\}/g, encodeURIComponent(node().services.nodes.local))
          .replace(/\{[a-z_]+\}/g, "x-placeholder");
      for (const e of node().api.catalogue[v]) {
        const a = await req(
          node(),
          e.method,
          `/api/${v}${fill(e.path)}`,
          e.method === "POST" || e.method === "PUT" ? { body: {} } : {},
        );
        expect(a.status === 404 && a.body?.message === "Not found", `${e.method} ${e.path}`).toBe(false);
        expect(a.status, `${e.method} ${e.path}`).toBeLessThan(500);
      }
    },
  );
});
