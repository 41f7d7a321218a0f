// svc_auth_pgsql against a real PostgreSQL (initdb + postgres on a free loopback port, a password
// login) with real MQTT clients: the shared database cases (db-cases.ts: allow, deny, ignore to the
// next provider, ACL rows, superuser, down / hanging / back), then what is PostgreSQL's: the
// `$all` row, salted hashes with a salt column, an `is_superuser` column in auth_query, a
// boolean superuser column, rows without an opinion left to the rule file, and a bad query.

import pg from "pg";
import { afterAll, beforeAll, expect, it } from "vitest";
import { hashPassword, parseHashSpec } from "../../src/auth/password-hash.ts";
import { PGSQL_PLUGIN } from "../../src/auth/pgsql-provider.ts";
import { findPostgres, POSTGRES_PASSWORD, POSTGRES_USER } from "../helpers/backends/postgres.ts";
import type { BackendServer } from "../helpers/backends/process.ts";
import { describeBackend } from "../helpers/backends/process.ts";
import { dbProviderCases, TIMEOUT } from "./db-cases.ts";
import { connackCode, connect, uid, useNode, useTempDir } from "./helpers.ts";

const sha256 = (pw: string) => hashPassword(parseHashSpec("sha256"), pw);

describeBackend("svc_auth_pgsql", findPostgres(), (provider) => {
  let server: BackendServer | undefined;
  const files = useTempDir();
  const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });
  const srv = () => {
    if (server === undefined) throw new Error("PostgreSQL not started");
    return server;
  };

  beforeAll(async () => {
    server = await provider.start();
    const admin = new pg.Client({
      host: server.host,
      port: server.port,
      user: POSTGRES_USER,
      password: POSTGRES_PASSWORD,
    });
    await admin.connect();
    await admin.query("create database mqtt");
    await admin.end();
    const db = new pg.Client({
      host: server.host,
      port: server.port,
      user: POSTGRES_USER,
      password: POSTGRES_PASSWORD,
      database: "mqtt",
    });
    await db.connect();
    await db.query(`create table mqtt_user (id serial primary key, username varchar(100) unique,
      password varchar(100), salt varchar(40), is_superuser boolean default false)`);
    await db.query(`create table mqtt_acl (id serial primary key, allow integer, ipaddr varchar(60),
      username varchar(100), clientid varchar(100), access integer not null, topic varchar(100) not null)`);
    const users: [string, string, string, boolean][] = [
      ["alice", await sha256("pw"), "", false],
      ["admin", await sha256("pw"), "", true],
      ["salty", await hashPassword(parseHashSpec("salt,sha256"), "pw", "s4lt"), "s4lt", false],
    ];
    for (const u of users) {
      await db.query("insert into mqtt_user (username, password, salt, is_superuser) values ($1, $2, $3, $4)", u);
    }
    const acl: [number, string | null, string | null, string | null, number, string][] = [
      [1, null, "alice", null, 2, "ok/#"],
      [1, null, "alice", null, 2, "users/%u/#"],
      [1, null, "alice", null, 1, "ok/#"],
      [0, null, "alice", null, 1, "nosub/#"],
      [0, null, "$all", null, 2, "no/#"],
      [0, null, "alice", null, 2, "users/#"],
      [0, "127.0.0.1", null, "ip-client", 2, "ip/#"],
      [0, null, null, "eq-client", 1, "eq t/#"],
    ];
    for (const r of acl) {
      await db.query(
        "insert into mqtt_acl (allow, ipaddr, username, clientid, access, topic) values ($1,$2,$3,$4,$5,$6)",
        r,
      );
    }
    await db.end();
  }, 60_000);
  afterAll(async () => {
    await server?.close();
  });

  function writeConf(extra: Record<string, string> = {}): void {
    const conf: Record<string, string> = {
      "auth.pgsql.server": `${srv().host}:${srv().port}`,
      "auth.pgsql.username": POSTGRES_USER,
      "auth.pgsql.password": POSTGRES_PASSWORD,
      "auth.pgsql.database": "mqtt",
      "auth.pgsql.query_timeout": `${TIMEOUT}ms`,
      ...extra,
    };
    files.write(
      `${PGSQL_PLUGIN}.conf`,
      `${Object.entries(conf)
        .map(([k, v]) => `${k} = ${v}`)
        .join("\n")}\n`,
    );
  }

  dbProviderCases({
    plugin: PGSQL_PLUGIN,
    alarm: "auth_pgsql_down",
    node,
    server: srv,
    writeConf,
    onErrorKey: "auth.pgsql.on_error",
  });

  it("rows: $all, ipaddr and clientid together, `eq` exact marker, no row: the rule file", async () => {
    writeConf();
    await node().plugins.load(PGSQL_PLUGIN);
    try {
      const a = await connect(node(), 5, { username: "alice", password: "pw" });
      // No row for this topic: the default rule file allows it.
      await a.c.publishAsync("free/1", "x", { qos: 1 });
      // The $all row applies to alice as well (first match: `ok/#` rows come first).
      await expect(a.c.publishAsync("no/2", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      writeConf({
        "auth.pgsql.auth_query": "select password from mqtt_user where username = 'alice'",
        "auth.pgsql.acl_query":
          "select allow, ipaddr, username, clientid, access, topic from mqtt_acl where clientid = '%c' order by id",
      });
      await node().plugins.reload(PGSQL_PLUGIN);
      const ip = await connect(node(), 5, { clientId: "ip-client", username: "u", password: "pw" });
      await expect(ip.c.publishAsync("ip/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const eq = await connect(node(), 5, { clientId: "eq-client", username: "u", password: "pw" });
      const granted = await eq.c.subscribeAsync({ "t/x": { qos: 1 } });
      expect(granted.map((g) => g.qos)).toEqual([1]);
      const err = await eq.c.subscribeAsync({ "t/#": { qos: 1 } }).catch((e: { packet?: { granted?: number[] } }) => e);
      expect((err as { packet?: { granted?: number[] } }).packet?.granted).toEqual([0x87]);
    } finally {
      await node().plugins.unload(PGSQL_PLUGIN);
    }
  });

  it("salt,sha256 with a salt column; is_superuser selected by auth_query", async () => {
    writeConf({
      "auth.pgsql.auth_query": "select password, salt, is_superuser from mqtt_user where username = '%u' limit 1",
      "auth.pgsql.password_hash": "salt,sha256",
      "auth.pgsql.super_query": "",
    });
    await node().plugins.load(PGSQL_PLUGIN);
    try {
      expect(await connackCode(node(), 5, { clientId: uid(), username: "salty", password: "pw" })).toBe(0);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "salty", password: "s4ltpw" })).toBe(0x86);
      // No super query: the superuser flag comes from the auth row, so the `$all` deny is skipped.
      const admin = await connect(node(), 5, { username: "admin", password: "pw" });
      await admin.c.publishAsync("no/1", "x", { qos: 1 });
      const a = await connect(node(), 5, { username: "alice", password: "pw" });
      await expect(a.c.publishAsync("no/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
    } finally {
      await node().plugins.unload(PGSQL_PLUGIN);
    }
  });

  it("a query that fails raises the alarm like a server that is down; bad conf: file:line", async () => {
    writeConf({ "auth.pgsql.auth_query": "select password from no_such_table where username = '%u'" });
    await node().plugins.load(PGSQL_PLUGIN);
    try {
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
      expect(node().sys.alarms.isActive("auth_pgsql_down")).toBe(true);
    } finally {
      await node().plugins.unload(PGSQL_PLUGIN);
    }
    expect(node().sys.alarms.isActive("auth_pgsql_down")).toBe(false);
    files.write(`${PGSQL_PLUGIN}.conf`, "auth.pgsql.password_hash = sha3\nauth.pgsql.server = a:b\n");
    const err = await node()
      .plugins.load(PGSQL_PLUGIN)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    const file = `${files.dir}/${PGSQL_PLUGIN}.conf`;
    expect(err?.issues).toEqual([
      expect.stringMatching(new RegExp(`^${file}:1: auth.pgsql.password_hash: invalid password hash "sha3"`)),
      expect.stringMatching(new RegExp(`^${file}:2: auth.pgsql.server: invalid server`)),
    ]);
    expect(node().plugins.isActive(PGSQL_PLUGIN)).toBe(false);
  });
});
