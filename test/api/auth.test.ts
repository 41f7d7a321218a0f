// Authentication (spec 000 §5, spec 001 §5): v3/v4 with an application's AppID/AppSecret, v2
// with a dashboard user. Missing credentials: 401 + WWW-Authenticate + code 104; wrong ones: 401 +
// code 103, the same answer whether or not the id exists. Applications and users are managed
// through `/apps`, `/users`, `/change_pwd`, and checked with `POST /auth`.

import { describe, expect, it } from "vitest";
import { basic, expectError, expectShape, req, uid, useNode } from "./helpers.ts";

describe("management API authentication", () => {
  const node = useNode();

  it("GET /status needs no credentials", async () => {
    const a = await req(node(), "GET", "/status", { auth: null });
    expect(a.status).toBe(200);
    expect(a.text).toBe(`Node ${node().services.nodes.local} is started\nsvc is running`);
  });

  it("/status answers 503 while the node starts or drains", async () => {
    const nodes = node().services.nodes;
    try {
      for (const state of ["starting", "draining"] as const) {
        nodes.setState(state);
        const a = await req(node(), "GET", "/status", { auth: null });
        expect(a.status, state).toBe(503);
        expect(a.text).toBe(`Node ${nodes.local} is started\nsvc is ${state}`);
      }
    } finally {
      nodes.setState("running");
    }
  });

  it.each(["/api/v2/monitoring/nodes", "/api/v3/brokers", "/api/v4/clients", "/api/v3/", "/api/v4/no/such/route"])(
    "%s without credentials: 401, WWW-Authenticate: Basic, code 104",
    async (path) => {
      const a = await req(node(), "GET", path, { auth: null });
      expectError(a, 401, 104);
      expect(a.headers.get("www-authenticate")).toMatch(/^Basic/);
    },
  );

  it("malformed or empty Basic credentials: 104", async () => {
    for (const header of [
      "Bearer abc",
      "Basic",
      "Basic !!!",
      basic("", "public"),
      basic("admin", ""),
      "Basic YWRtaW4=",
    ]) {
      const a = await req(node(), "GET", "/api/v3/brokers", { auth: null, headers: { authorization: header } });
      expectError(a, 401, 104);
      expect(a.headers.get("www-authenticate")).toMatch(/^Basic/);
    }
  });

  it("wrong credentials: 103, the same answer for an unknown id and a wrong secret", async () => {
    const wrongSecret = await req(node(), "GET", "/api/v3/brokers", { auth: ["admin", "nope"] });
    const unknownId = await req(node(), "GET", "/api/v3/brokers", { auth: ["nobody", "nope"] });
    expectError(wrongSecret, 401, 103);
    expect(unknownId.status).toBe(wrongSecret.status);
    expect(unknownId.text).toBe(wrongSecret.text);
    expect(unknownId.headers.get("www-authenticate")).toBe(wrongSecret.headers.get("www-authenticate"));
    const v2 = await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: ["admin", "nope"] });
    expectError(v2, 401, 103);
  });

  it("v2 takes dashboard users, v3 applications: each rejects the other's credentials", async () => {
    const appId = `app${uid()}`;
    const created = await req(node(), "POST", "/api/v3/apps", { body: { app_id: appId, secret: "app-secret" } });
    expect(created.body).toEqual({ code: 0, data: { secret: "app-secret" } });
    expect((await req(node(), "GET", "/api/v3/brokers", { auth: [appId, "app-secret"] })).status).toBe(200);
    expectError(await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: [appId, "app-secret"] }), 401, 103);
    const user = `user${uid()}`;
    await req(node(), "POST", "/api/v3/users", { body: { username: user, password: "pw-1", tags: "viewer" } });
    expect((await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: [user, "pw-1"] })).status).toBe(200);
    expectError(await req(node(), "GET", "/api/v3/brokers", { auth: [user, "pw-1"] }), 401, 103);
  });

  it("/apps: create (secret shown once), list, lookup, update, disable, expire, delete", async () => {
    const id = `app${uid()}`;
    const created = await req(node(), "POST", "/api/v3/apps", { body: { app_id: id, name: "Tooling", desc: "ci" } });
    expect(created.status).toBe(200);
    const secret = created.body.data.secret as string;
    expect(secret.length).toBeGreaterThanOrEqual(16);
    const list = await req(node(), "GET", "/api/v3/apps");
    const mine = list.body.data.find((a: { app_id: string }) => a.app_id === id);
    expectShape(mine, {
      app_id: "string",
      name: "string",
      desc: "string",
      status: "boolean",
      expired: ["int", "string"],
    });
    expect(mine).toEqual({ app_id: id, name: "Tooling", desc: "ci", status: true, expired: "undefined" });
    expect(list.body.data.some((a: { app_id: string }) => a.app_id === "admin")).toBe(true);
    expect((await req(node(), "GET", `/api/v3/apps/${id}`)).body).toEqual({ code: 0, data: mine });
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const as = { auth: [id, secret] as [string, string] };
    expect((await req(node(), "GET", "/api/v4/brokers", as)).status).toBe(200);

    expect((await req(node(), "PUT", `/api/v3/apps/${id}`, { body: { status: false } })).body).toEqual({ code: 0 });
    expectError(await req(node(), "GET", "/api/v4/brokers", as), 401, 103);
    await req(node(), "PUT", `/api/v3/apps/${id}`, {
      body: { status: true, expired: Math.floor(Date.now() / 1000) - 1 },
    });
    expectError(await req(node(), "GET", "/api/v4/brokers", as), 401, 103);
    await req(node(), "PUT", `/api/v3/apps/${id}`, { body: { expired: "undefined", name: "Renamed" } });
    expect((await req(node(), "GET", "/api/v4/brokers", as)).status).toBe(200);
    expect((await req(node(), "GET", `/api/v3/apps/${id}`)).body.data.name).toBe("Renamed");

    expectError(await req(node(), "POST", "/api/v3/apps", { body: { app_id: id } }), 409, 113);
    expectError(await req(node(), "POST", "/api/v3/apps", { body: { name: "no id" } }), 400, 107);
    expect((await req(node(), "DELETE", `/api/v3/apps/${id}`)).body).toEqual({ code: 0 });
    expectError(await req(node(), "GET", "/api/v4/brokers", as), 401, 103);
    expectError(await req(node(), "GET", `/api/v3/apps/${id}`), 404, 404);
    expectError(await req(node(), "PUT", `/api/v3/apps/${id}`, { body: { name: "x" } }), 404, 404);
    expectError(await req(node(), "DELETE", `/api/v3/apps/${id}`), 404, 404);
  });

  it("/users, /change_pwd and POST /auth", async () => {
    const user = `u${uid()}`;
    expect(
      (await req(node(), "POST", "/api/v3/users", { body: { username: user, password: "first", tags: "ops" } })).body,
    ).toEqual({
      code: 0,
    });
    const list = await req(node(), "GET", "/api/v3/users");
    for (const u of list.body.data) expectShape(u, { username: "string", tags: "string" });
    expect(list.body.data).toContainEqual({ username: user, tags: "ops" });
    expect(list.body.data).toContainEqual(expect.objectContaining({ username: "admin" }));
    expect(JSON.stringify(list.body)).not.toContain("first");
    expectError(await req(node(), "POST", "/api/v3/users", { body: { username: user, password: "x" } }), 409, 113);

    expect((await req(node(), "POST", "/api/v3/auth", { body: { username: user, password: "first" } })).body).toEqual({
      code: 0,
    });
    expectError(await req(node(), "POST", "/api/v3/auth", { body: { username: user, password: "wrong" } }), 401, 103);
    expectError(
      await req(node(), "POST", "/api/v3/auth", { body: { username: "ghost", password: "wrong" } }),
      401,
      103,
    );
    expectError(await req(node(), "POST", "/api/v3/auth", { body: { username: user } }), 401, 104);

    expect((await req(node(), "PUT", `/api/v3/users/${user}`, { body: { tags: "admins" } })).body).toEqual({ code: 0 });
    expect((await req(node(), "GET", "/api/v3/users")).body.data).toContainEqual({ username: user, tags: "admins" });

    const change = (old_pwd: string, new_pwd: string, who = user) =>
      req(node(), "PUT", `/api/v3/change_pwd/${who}`, { body: { old_pwd, new_pwd } });
    expectError(await change("wrong", "second"), 400, 114);
    expectError(await change("first", "second", "ghost"), 404, 105);
    expectError(await req(node(), "PUT", `/api/v3/change_pwd/${user}`, { body: { old_pwd: "first" } }), 400, 107);
    expect((await change("first", "second")).body).toEqual({ code: 0 });
    expect((await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: [user, "second"] })).status).toBe(200);
    expectError(await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: [user, "first"] }), 401, 103);

    expectError(await req(node(), "DELETE", "/api/v3/users/admin"), 403, 106);
    expectError(await req(node(), "PUT", "/api/v3/users/ghost", { body: { tags: "x" } }), 404, 105);
    expect((await req(node(), "DELETE", `/api/v3/users/${user}`)).body).toEqual({ code: 0 });
    expectError(await req(node(), "DELETE", `/api/v3/users/${user}`), 404, 105);
    expectError(await req(node(), "GET", "/api/v2/monitoring/nodes", { auth: [user, "second"] }), 401, 103);
  });

  it("a failing credential store answers 503 {message}, never 500", async () => {
    const apps = node().services.apps;
    const verify = apps.verify;
    apps.verify = () => Promise.reject(new Error("store down"));
    try {
      const a = await req(node(), "GET", "/api/v3/brokers");
      expect(a.status).toBe(503);
      expect(a.body).toEqual({ message: "credential store unavailable" });
    } finally {
      apps.verify = verify;
    }
    expect((await req(node(), "GET", "/api/v3/brokers")).status).toBe(200);
  });

  it("secrets longer than bcrypt's 72 bytes count in full", async () => {
    const id = `long${uid()}`;
    const secret = `${"s".repeat(80)}-tail`;
    await req(node(), "POST", "/api/v3/apps", { body: { app_id: id, secret } });
    expect((await req(node(), "GET", "/api/v3/brokers", { auth: [id, secret] })).status).toBe(200);
    expectError(await req(node(), "GET", "/api/v3/brokers", { auth: [id, `${"s".repeat(80)}-other`] }), 401, 103);
  });

  it("the OpenAPI document is served without credentials from the same schemas", async () => {
    const a = await req(node(), "GET", "/api/v4/openapi.json", { auth: null });
    expect(a.status).toBe(200);
    expect(a.body.openapi).toMatch(/^3\./);
    expect(a.body.paths["/clients/{clientid}"].get.operationId).toBe("lookup_client");
    expect(a.body.paths["/mqtt/publish"].post.requestBody.content["application/json"].schema).toBeDefined();
    expect(a.body.components.schemas.Client.properties.clientid.type).toBe("string");
  });
});

describe("default credentials", () => {
  const node = useNode({
    "management.default_application.id": "ops",
    "management.default_application.secret": "s3cret-app",
    "dashboard.default_user.login": "root",
    "dashboard.default_user.password": "s3cret-user",
  });

  it("the configured default application and user are created at first start", async () => {
    expect((await req(node(), "GET", "/api/v3/brokers", { auth: ["ops", "s3cret-app"] })).status).toBe(200);
    expectError(await req(node(), "GET", "/api/v3/brokers"), 401, 103);
    expect((await req(node(), "GET", "/api/v2/management/nodes", { auth: ["root", "s3cret-user"] })).status).toBe(200);
    expectError(await req(node(), "DELETE", "/api/v3/users/root", { auth: ["ops", "s3cret-app"] }), 403, 106);
  });
});
