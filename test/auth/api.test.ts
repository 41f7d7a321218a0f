// `/auth_clientid` and `/auth_username` (v3 and v4, in-process and over HTTP): list (paginated,
// `{clientid|username, created_at}`), add one or an array, look up (no password shown), change a
// password (a real client then connects with it), delete; 404 for unknown ids, 409/113 for an
// existing one, 107/108/109 for bad bodies; the catalogue lists every route.

import { describe, expect, it } from "vitest";
import { expectError, expectShape, http, req } from "../api/helpers.ts";
import { connackCode, uid, useNode } from "./helpers.ts";

const KINDS = [
  { path: "auth_clientid", field: "clientid", plugin: "svc_auth_clientid" },
  { path: "auth_username", field: "username", plugin: "svc_auth_username" },
] as const;

describe("auth entry endpoints", () => {
  const node = useNode({ allow_anonymous: "false" });

  it("the catalogue lists the auth and ban routes", async () => {
    const keys = node().api.catalogue.v3.map((e) => `${e.method} ${e.path}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        "GET /auth_clientid",
        "POST /auth_clientid",
        "GET /auth_clientid/{clientid}",
        "PUT /auth_clientid/{clientid}",
        "DELETE /auth_clientid/{clientid}",
        "GET /auth_username",
        "POST /auth_username",
        "GET /auth_username/{username}",
        "PUT /auth_username/{username}",
        "DELETE /auth_username/{username}",
        "GET /banned",
        "POST /banned",
        "DELETE /banned/{as}/{who}",
        "DELETE /banned/{who}",
      ]),
    );
  });

  describe.each(KINDS)("/$path", ({ path, field, plugin }) => {
    const connectAs = (id: string, password: string) =>
      connackCode(
        node(),
        5,
        field === "clientid" ? { clientId: id, username: "u", password } : { clientId: uid(), username: id, password },
      );

    it("add, list, look up, change the password, delete", async () => {
      const n = node();
      await n.plugins.load(plugin);
      try {
        const id = uid("e");
        expect((await req(n, "POST", `/api/v3/${path}`, { body: { [field]: id, password: "one" } })).body).toEqual({
          code: 0,
        });
        expect(await connectAs(id, "one")).toBe(0);
        const list = await req(n, "GET", `/api/v3/${path}`);
        expect(list.body.meta).toEqual({ page: 1, limit: 10000, count: list.body.data.length });
        const item = list.body.data.find((x: Record<string, string>) => x[field] === id);
        expectShape(item, { [field]: "string", created_at: "int" }, `${path} item`);
        expect(Math.abs(item.created_at - Date.now())).toBeLessThan(5000);
        const one = await http(n, "http", "GET", `/api/v4/${path}/${id}`);
        expect(one.body.code).toBe(0);
        expectShape(one.body.data, { [field]: "string", is_superuser: "boolean", created_at: "int" }, path);
        expect(one.body.data).toEqual({ [field]: id, is_superuser: false, created_at: item.created_at });
        expect((await req(n, "PUT", `/api/v3/${path}/${id}`, { body: { password: "two" } })).body).toEqual({ code: 0 });
        expect(await connectAs(id, "one")).toBe(0x86);
        expect(await connectAs(id, "two")).toBe(0);
        expect((await http(n, "http_v2", "DELETE", `/api/v3/${path}/${id}`)).body).toEqual({ code: 0 });
        expect(await connectAs(id, "two")).toBe(0x87);
        expectError(await req(n, "GET", `/api/v3/${path}/${id}`), 404, 404);
        expectError(await req(n, "PUT", `/api/v3/${path}/${id}`, { body: { password: "x" } }), 404, 404);
        expectError(await req(n, "DELETE", `/api/v3/${path}/${id}`), 404, 404);
      } finally {
        await n.plugins.unload(plugin);
      }
    });

    it("adds an array: each id answered ok or existed; one that exists is 409/113", async () => {
      const n = node();
      const a = uid("a");
      const b = uid("b");
      await req(n, "POST", `/api/v3/${path}`, { body: { [field]: a, password: "p" } });
      expectError(await req(n, "POST", `/api/v3/${path}`, { body: { [field]: a, password: "p" } }), 409, 113);
      const many = await req(n, "POST", `/api/v4/${path}`, {
        body: [
          { [field]: a, password: "p" },
          { [field]: b, password: "q", is_superuser: true },
        ],
      });
      expect(many.body).toEqual({ code: 0, data: { [a]: "existed", [b]: "ok" } });
      expect((await req(n, "GET", `/api/v3/${path}/${b}`)).body.data.is_superuser).toBe(true);
      expect((await req(n, "GET", `/api/v3/${path}?_limit=1`)).body.data).toHaveLength(1);
    });

    it("answers 107 for a missing field, 108 for a wrong type, 109 for a body that is not JSON", async () => {
      const n = node();
      expectError(await req(n, "POST", `/api/v3/${path}`, { body: { [field]: "x" } }), 400, 107);
      expectError(await req(n, "POST", `/api/v3/${path}`, { body: { password: "x" } }), 400, 107);
      expectError(await req(n, "POST", `/api/v3/${path}`, { body: { [field]: "x", password: 5 } }), 400, 108);
      expectError(await req(n, "POST", `/api/v3/${path}`, { body: { [field]: "", password: "p" } }), 400, 108);
      expectError(await req(n, "POST", `/api/v3/${path}`, { raw: "not json" }), 400, 109);
      expectError(await req(n, "PUT", `/api/v3/${path}/x`, { body: {} }), 400, 107);
      expectError(await req(n, "GET", `/api/v3/${path}`, { auth: ["admin", "wrong"] }), 401, 103);
    });
  });

  it("the ACL cache endpoints answer 112 for a client that is not online", async () => {
    expectError(await req(node(), "GET", "/api/v3/clients/nobody-here/acl_cache"), 404, 112);
    expectError(await req(node(), "DELETE", "/api/v3/clients/nobody-here/acl_cache"), 404, 112);
  });
});
