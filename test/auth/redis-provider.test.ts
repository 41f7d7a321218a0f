// svc_auth_redis against a real Redis (redis-server on a free loopback port) with real MQTT clients:
// the shared database cases (db-cases.ts: allow, deny, ignore to the next provider, ACL hash,
// superuser, down / hanging / back), then what is Redis's: the ACL hash as an allow list (a user
// without a hash is left to the rule file), salted hashes through `HMGET ... password salt`, `%c`
// in a command, the Redis password, and a bad configuration.

import { Redis } from "ioredis";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashPassword, parseHashSpec } from "../../src/auth/password-hash.ts";
import { REDIS_PLUGIN } from "../../src/auth/redis-provider.ts";
import { type BackendServer, describeBackend } from "../helpers/backends/process.ts";
import { findRedis, findRedisBinary, startRedis } from "../helpers/backends/redis.ts";
import { dbProviderCases, TIMEOUT } from "./db-cases.ts";
import { connackCode, connect, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";

describeBackend("svc_auth_redis", findRedis(), (provider) => {
  let server: BackendServer | undefined;
  const files = useTempDir();
  const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });
  const srv = () => {
    if (server === undefined) throw new Error("Redis not started");
    return server;
  };

  /** The data (the server keeps none across a restart). */
  async function seed(): Promise<void> {
    const r = new Redis({ host: srv().host, port: srv().port });
    await r.hset("mqtt_user:alice", { password: "pw" });
    await r.hset("mqtt_user:admin", { password: "pw", is_superuser: "1" });
    await r.hset("mqtt_user:bob", { password: "pw", is_superuser: "0" });
    const salted = await hashPassword(parseHashSpec("salt,sha256"), "pw", "NaCl");
    await r.hset("mqtt_user:salty", { password: salted, salt: "NaCl" });
    await r.hset("mqtt_user:dev-1", { password: "devpw" });
    await r.hset("mqtt_acl:alice", { "ok/#": "3", "users/%u/#": "2" });
    await r.hset("mqtt_acl:admin", { "ok/#": "2" });
    await r.hset("mqtt_acl:eq", { "eq t/#": "1", "c/%c": "2" });
    await r.hset("mqtt_user:eq", { password: "pw" });
    r.disconnect();
  }

  beforeAll(async () => {
    server = await provider.start();
    await seed();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  function writeConf(extra: Record<string, string> = {}): void {
    const conf: Record<string, string> = {
      "auth.redis.server": `${srv().host}:${srv().port}`,
      "auth.redis.pool": "2",
      "auth.redis.query_timeout": `${TIMEOUT}ms`,
      ...extra,
    };
    files.write(
      `${REDIS_PLUGIN}.conf`,
      `${Object.entries(conf)
        .map(([k, v]) => `${k} = ${v}`)
        .join("\n")}\n`,
    );
  }

  async function withRedis(extra: Record<string, string>, body: () => Promise<void>): Promise<void> {
    writeConf(extra);
    await node().plugins.load(REDIS_PLUGIN);
    try {
      await body();
    } finally {
      await node().plugins.unload(REDIS_PLUGIN);
    }
  }

  dbProviderCases({
    plugin: REDIS_PLUGIN,
    alarm: "auth_redis_down",
    node,
    server: srv,
    writeConf,
    onErrorKey: "auth.redis.on_error",
    restarted: seed,
  });

  it("the ACL hash is an allow list; a user without one is left to the rule file", async () => {
    await withRedis({}, async () => {
      const a = await connect(node(), 5, { username: "alice", password: "pw" });
      await expect(a.c.publishAsync("free/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const b = await connect(node(), 5, { username: "bob", password: "pw" });
      await b.c.publishAsync("free/1", "x", { qos: 1 });
      await b.c.publishAsync("no/1", "x", { qos: 1 });
      // `eq t/#` allows subscribing to exactly `t/#`; `c/%c` publishing to the client's own topic.
      const e = await connect(node(), 5, { clientId: "eq-1", username: "eq", password: "pw" });
      expect((await e.c.subscribeAsync({ "t/#": { qos: 1 } })).map((g) => g.qos)).toEqual([1]);
      const err = await e.c.subscribeAsync({ "t/x": { qos: 1 } }).catch((x: { packet?: { granted?: number[] } }) => x);
      expect((err as { packet?: { granted?: number[] } }).packet?.granted).toEqual([0x87]);
      await e.c.publishAsync("c/eq-1", "x", { qos: 1 });
      await expect(e.c.publishAsync("c/eq-2", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
    });
  });

  it("salt,sha256 with HMGET password salt; %c in a command; no super/ACL command", async () => {
    await withRedis(
      {
        "auth.redis.auth_cmd": "HMGET mqtt_user:%u password salt",
        "auth.redis.password_hash": "salt,sha256",
        "auth.redis.super_cmd": "",
        "auth.redis.acl_cmd": "",
      },
      async () => {
        expect(await connackCode(node(), 5, { clientId: uid(), username: "salty", password: "pw" })).toBe(0);
        expect(await connackCode(node(), 5, { clientId: uid(), username: "salty", password: "NaClpw" })).toBe(0x86);
        // No ACL command: alice's hash is not read, the rule file allows.
        const a = await connect(node(), 5, { username: "salty", password: "pw" });
        await a.c.publishAsync("no/1", "x", { qos: 1 });
      },
    );
    await withRedis({ "auth.redis.auth_cmd": "HMGET mqtt_user:%c password" }, async () => {
      expect(await connackCode(node(), 5, { clientId: "dev-1", username: "any", password: "devpw" })).toBe(0);
      expect(await connackCode(node(), 5, { clientId: "dev-1", username: "any", password: "pw" })).toBe(0x86);
      // No password at all: a known client is refused.
      expect(await connackCode(node(), 5, { clientId: "dev-1" })).toBe(0x86);
    });
    await withRedis({}, async () => {
      // A command needing %u from a client without a user name is not sent: unknown here.
      expect(await connackCode(node(), 5, { clientId: "dev-1" })).toBe(0x87);
    });
  });

  it("type sentinel (a sentinel naming the master) and type cluster (a one-node cluster)", async () => {
    const bin = findRedisBinary() ?? "redis-server";
    const sentinel = await startRedis(bin, { sentinelOf: srv().port });
    try {
      // Not a timeout test: the first command waits for the sentinel, then the master.
      const at = {
        "auth.redis.server": `127.0.0.1:${sentinel.port}`,
        "auth.redis.sentinel": "mymaster",
        "auth.redis.query_timeout": "5s",
      };
      await withRedis({ "auth.redis.type": "sentinel", ...at }, async () => {
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "px" })).toBe(0x86);
      });
    } finally {
      await sentinel.close();
    }
    const cluster = await startRedis(bin, { cluster: true });
    try {
      const r = new Redis({ host: cluster.host, port: cluster.port });
      await r.call("CLUSTER", "ADDSLOTSRANGE", "0", "16383");
      await waitUntil(async () => String(await r.call("CLUSTER", "INFO")).includes("cluster_state:ok"), "cluster ok");
      await r.hset("mqtt_user:carol", { password: "pw" });
      await r.hset("mqtt_acl:carol", { "c/#": "2" });
      r.disconnect();
      // Not a timeout test: the first command waits for the slot map.
      const at = { "auth.redis.server": `127.0.0.1:${cluster.port}`, "auth.redis.query_timeout": "5s" };
      await withRedis({ "auth.redis.type": "cluster", ...at }, async () => {
        expect(await connackCode(node(), 5, { clientId: uid(), username: "carol", password: "px" })).toBe(0x86);
        const c = await connect(node(), 5, { username: "carol", password: "pw" });
        await c.c.publishAsync("c/1", "x", { qos: 1 });
        await expect(c.c.publishAsync("d/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      });
    } finally {
      await cluster.close();
    }
  });

  it("a Redis password; a bad configuration stops the load with file:line", async () => {
    const r = new Redis({ host: srv().host, port: srv().port });
    await r.config("SET", "requirepass", "s3cret");
    try {
      await withRedis({}, async () => {
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
        expect(node().sys.alarms.isActive("auth_redis_down")).toBe(true);
      });
      await withRedis({ "auth.redis.password": "s3cret" }, async () => {
        expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
      });
    } finally {
      await r.call("AUTH", "s3cret");
      await r.config("SET", "requirepass", "");
      r.disconnect();
    }
    files.write(`${REDIS_PLUGIN}.conf`, "auth.redis.type = sentinel\nauth.redis.auth_cmd =\nauth.redis.nope = 1\n");
    const err = await node()
      .plugins.load(REDIS_PLUGIN)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    const file = `${files.dir}/${REDIS_PLUGIN}.conf`;
    expect(err?.issues).toEqual([expect.stringMatching(new RegExp(`^${file}:3: unknown key auth.redis.nope`))]);
    files.write(`${REDIS_PLUGIN}.conf`, "auth.redis.type = sentinel\nauth.redis.password_hash = salt\n");
    const err2 = await node()
      .plugins.load(REDIS_PLUGIN)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    expect(err2?.issues).toEqual([
      expect.stringMatching(new RegExp(`^${file}:1: auth.redis.sentinel must name the master`)),
      expect.stringMatching(new RegExp(`^${file}:2: auth.redis.password_hash: invalid password hash`)),
    ]);
    expect(node().plugins.isActive(REDIS_PLUGIN)).toBe(false);
  });
});
