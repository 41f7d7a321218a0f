// svc_auth_http on a real node with real clients against an HTTP auth service in the test: allow,
// deny (4 / 0x86, 403 -> 5 / 0x87), `ignore` passed to the next provider in chain order, the super
// request, the ACL request (PUBACK / SUBACK 0x87), GET / POST form / POST JSON with placeholders,
// the service down or hanging (CONNACK within the timeout, alarm raised, on_error both ways) and
// back (recovers without a restart), and a bad configuration (file:line).

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HTTP_ALARM } from "../../src/auth/http-provider.ts";
import { connackCode, connect, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";
import { type SeenRequest, TestHttpServer } from "./http-server.ts";

const HTTP = "svc_auth_http";
const CLIENTID = "svc_auth_clientid";

function authService(r: SeenRequest) {
  const p = r.params;
  if (r.path === "/auth") {
    if (p.username === "hang") return "hang" as const;
    if (p.username?.startsWith("pass")) return { status: 200, body: "ignore" };
    if (p.username === "forbidden") return { status: 403 };
    if ((p.username === "alice" || p.username === "admin") && p.password === "pw") return { status: 200, body: "ok" };
    return { status: 401 };
  }
  if (r.path === "/super") return p.username === "admin" ? { status: 200 } : { status: 404 };
  if (r.path === "/acl") {
    if (p.topic.startsWith("ok/")) return { status: 200 };
    if (p.topic.startsWith("next/")) return { status: 200, body: "ignore" };
    return { status: 403 };
  }
  return { status: 404 };
}

const server = new TestHttpServer();
server.handle = authService;
beforeAll(() => server.start());
afterAll(() => server.stop());

const files = useTempDir();
const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });

function writeConf(extra: Record<string, string> = {}): void {
  const conf: Record<string, string> = {
    "auth.http.auth_req.url": `${server.base}/auth`,
    "auth.http.super_req.url": `${server.base}/super`,
    "auth.http.acl_req.url": `${server.base}/acl`,
    "auth.http.timeout": "600ms",
    ...extra,
  };
  files.write(
    `${HTTP}.conf`,
    `${Object.entries(conf)
      .map(([k, v]) => `${k} = ${v}`)
      .join("\n")}\n`,
  );
}

async function withHttp<T>(extra: Record<string, string>, body: () => Promise<T>): Promise<T> {
  writeConf(extra);
  await node().plugins.load(HTTP);
  try {
    return await body();
  } finally {
    await node().plugins.unload(HTTP);
  }
}

describe("svc_auth_http", () => {
  it("allows, refuses with 4 / 0x86 (403: 5 / 0x87), POST form with placeholders", async () => {
    await withHttp({}, async () => {
      const n = node();
      server.seen.length = 0;
      const id = uid();
      expect(await connackCode(n, 5, { clientId: id, username: "alice", password: "pw" })).toBe(0);
      expect(server.seen[0]).toMatchObject({
        method: "POST",
        path: "/auth",
        contentType: "application/x-www-form-urlencoded",
        params: { clientid: id, username: "alice", password: "pw" },
      });
      expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
      expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "bad" })).toBe(4);
      expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "bad" })).toBe(0x86);
      expect(await connackCode(n, 4, { clientId: uid(), username: "forbidden", password: "pw" })).toBe(5);
      expect(await connackCode(n, 5, { clientId: uid(), username: "forbidden", password: "pw" })).toBe(0x87);
    });
  });

  it("GET with the parameters in the query, POST JSON", async () => {
    const params = "clientid=%c,username=%u,password=%P,ip=%a,port=%p,proto=%r,fixed=x-%u";
    await withHttp({ "auth.http.auth_req.method": "get", "auth.http.auth_req.params": params }, async () => {
      server.seen.length = 0;
      const id = uid();
      expect(await connackCode(node(), 5, { clientId: id, username: "alice", password: "pw" })).toBe(0);
      expect(server.seen[0]).toMatchObject({
        method: "GET",
        params: {
          clientid: id,
          username: "alice",
          password: "pw",
          ip: "127.0.0.1",
          port: String(node().port("tcp")),
          proto: "mqtt",
          fixed: "x-alice",
        },
      });
    });
    await withHttp({ "auth.http.auth_req.headers.content_type": "application/json" }, async () => {
      server.seen.length = 0;
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "bad" })).toBe(0x86);
      expect(server.seen[0]).toMatchObject({
        method: "POST",
        contentType: "application/json",
        params: { username: "alice", password: "bad" },
      });
    });
  });

  it("a body of `ignore` passes the client to the next provider, in start order", async () => {
    const n = node();
    await n.services.authClientid.add({ id: "dev-http", password: "client-pw" });
    await withHttp({}, async () => {
      await n.plugins.load(CLIENTID);
      try {
        // http first: it ignores "pass*", svc_auth_clientid decides.
        expect(await connackCode(n, 5, { clientId: "dev-http", username: "pass1", password: "client-pw" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "dev-http", username: "pass1", password: "nope" })).toBe(0x86);
        // http decides what it knows.
        expect(await connackCode(n, 5, { clientId: "dev-http", username: "alice", password: "client-pw" })).toBe(0x86);
        // Restarted, http is last: svc_auth_clientid decides first.
        await n.plugins.reload(HTTP);
        expect(await connackCode(n, 5, { clientId: "dev-http", username: "alice", password: "client-pw" })).toBe(0);
        // Nobody decides: allow_anonymous = false.
        expect(await connackCode(n, 5, { clientId: uid(), username: "pass2", password: "x" })).toBe(0x87);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });

  it("superuser and the ACL request: PUBACK / SUBACK 0x87, `ignore` left to the rule file", async () => {
    await withHttp({}, async () => {
      server.seen.length = 0;
      const user = await connect(node(), 5, { username: "alice", password: "pw" });
      await user.c.publishAsync("ok/1", "x", { qos: 1 });
      await user.c.publishAsync("next/1", "x", { qos: 1 });
      await expect(user.c.publishAsync("no/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const acl = server.seen.filter((r) => r.path === "/acl");
      expect(acl[0].params).toMatchObject({ access: "2", username: "alice", clientid: user.id, topic: "ok/1" });
      const err = await user.c
        .subscribeAsync({ "ok/s": { qos: 1 }, "no/s": { qos: 1 } })
        .catch((e: { packet?: { granted?: number[] } }) => e);
      expect((err as { packet?: { granted?: number[] } }).packet?.granted).toEqual([1, 0x87]);
      expect(server.seen.find((r) => r.path === "/acl" && r.params.topic === "no/s")?.params.access).toBe("1");
      // The super request answered 200 for admin: no ACL request at all.
      const before = server.seen.length;
      const admin = await connect(node(), 5, { username: "admin", password: "pw" });
      await admin.c.publishAsync("no/2", "x", { qos: 1 });
      expect(server.seen.slice(before).map((r) => r.path)).toEqual(["/auth", "/super"]);
    });
  });

  it("service down: CONNACK within the timeout, alarm raised; back: recovers without restart", async () => {
    const alarms = node().sys.alarms;
    await withHttp({}, async () => {
      await server.stop();
      try {
        const t0 = Date.now();
        // on_error = ignore (default): nobody else decides, so allow_anonymous = false refuses.
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
        expect(Date.now() - t0).toBeLessThan(600 + 1000);
        expect(alarms.isActive(HTTP_ALARM)).toBe(true);
      } finally {
        await server.start();
      }
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
      expect(alarms.isActive(HTTP_ALARM)).toBe(false);
    });
  });

  it("service hanging: answered at the timeout; on_error = ignore passes to the next provider", async () => {
    const n = node();
    await n.services.authClientid.add({ id: "dev-hang", password: "client-pw" });
    await withHttp({}, async () => {
      await n.plugins.load(CLIENTID);
      try {
        const t0 = Date.now();
        expect(await connackCode(n, 5, { clientId: "dev-hang", username: "hang", password: "client-pw" })).toBe(0);
        const took = Date.now() - t0;
        expect(took).toBeGreaterThanOrEqual(550);
        expect(took).toBeLessThan(600 + 1000);
        expect(n.sys.alarms.isActive(HTTP_ALARM)).toBe(true);
        expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
        expect(n.sys.alarms.isActive(HTTP_ALARM)).toBe(false);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });

  it("on_error = deny refuses while the service is down, ACL included", async () => {
    await withHttp({ "auth.http.on_error": "deny" }, async () => {
      const c = await connect(node(), 5, { username: "alice", password: "pw" });
      await server.stop();
      try {
        const t0 = Date.now();
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
        expect(Date.now() - t0).toBeLessThan(600 + 1000);
        await expect(c.c.publishAsync("ok/down", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      } finally {
        await server.start();
      }
      // Not cached: allowed once the service answers.
      await c.c.publishAsync("ok/down", "x", { qos: 1 });
      await waitUntil(() => !node().sys.alarms.isActive(HTTP_ALARM), "alarm cleared");
    });
  });

  it("a bad configuration stops the load with file:line", async () => {
    files.write(`${HTTP}.conf`, "auth.http.auth_req.url = ftp://x\nauth.http.pool_size = 0\nauth.http.nope = 1\n");
    const err = await node()
      .plugins.load(HTTP)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    const file = `${files.dir}/${HTTP}.conf`;
    expect(err?.issues?.[0]).toMatch(new RegExp(`^${file}:2: auth.http.pool_size`));
    expect(err?.issues?.[1]).toMatch(new RegExp(`^${file}:3: unknown key auth.http.nope`));
    expect(node().plugins.isActive(HTTP)).toBe(false);
  });
});
