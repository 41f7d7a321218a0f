// svc_auth_mysql against a real MariaDB (mariadb-install-db + mariadbd on a free loopback port, a
// user with a password) with real MQTT clients: the shared database cases (db-cases.ts: allow,
// deny, ignore to the next provider, ACL rows, superuser, down / hanging / back), then what is
// MySQL's: bcrypt and `<h>,salt` hashes, a superuser column of type tinyint, a login refused.

import mysql from "mysql2/promise";
import { afterAll, beforeAll, expect, it } from "vitest";
import { MYSQL_PLUGIN } from "../../src/auth/mysql-provider.ts";
import { hashPassword, parseHashSpec } from "../../src/auth/password-hash.ts";
import { findMariadb, MARIADB_DATABASE, MARIADB_PASSWORD, MARIADB_USER } from "../helpers/backends/mariadb.ts";
import { type BackendServer, describeBackend } from "../helpers/backends/process.ts";
import { dbProviderCases, TIMEOUT } from "./db-cases.ts";
import { connackCode, uid, useNode, useTempDir } from "./helpers.ts";

const sha256 = (pw: string) => hashPassword(parseHashSpec("sha256"), pw);

describeBackend("svc_auth_mysql", findMariadb(), (provider) => {
  let server: BackendServer | undefined;
  const files = useTempDir();
  const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });
  const srv = () => {
    if (server === undefined) throw new Error("MariaDB not started");
    return server;
  };

  beforeAll(async () => {
    server = await provider.start();
    const db = await mysql.createConnection({
      host: server.host,
      port: server.port,
      user: MARIADB_USER,
      password: MARIADB_PASSWORD,
      database: MARIADB_DATABASE,
    });
    await db.query(`create table mqtt_user (id int auto_increment primary key, username varchar(100) unique,
      password varchar(200), salt varchar(40), is_superuser tinyint(1) default 0)`);
    await db.query(`create table mqtt_acl (id int auto_increment primary key, allow int(1), ipaddr varchar(60),
      username varchar(100), clientid varchar(100), access int(2) not null, topic varchar(100) not null)`);
    const users: [string, string, string, number][] = [
      ["alice", await sha256("pw"), "", 0],
      ["admin", await sha256("pw"), "", 1],
      ["crypt", await hashPassword(parseHashSpec("bcrypt"), "pw", "", 4), "", 0],
      ["suffix", await hashPassword(parseHashSpec("sha512,salt"), "pw", "x9"), "x9", 0],
    ];
    for (const u of users) {
      await db.execute("insert into mqtt_user (username, password, salt, is_superuser) values (?, ?, ?, ?)", u);
    }
    const acl: [number, string | null, string | null, string | null, number, string][] = [
      [1, null, "alice", null, 2, "ok/#"],
      [1, null, "alice", null, 2, "users/%u/#"],
      [1, null, "alice", null, 1, "ok/#"],
      [0, null, "alice", null, 1, "nosub/#"],
      [0, null, "$all", null, 2, "no/#"],
      [0, null, "alice", null, 2, "users/#"],
    ];
    for (const r of acl) {
      await db.execute(
        "insert into mqtt_acl (allow, ipaddr, username, clientid, access, topic) values (?,?,?,?,?,?)",
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
      "auth.mysql.server": `${srv().host}:${srv().port}`,
      "auth.mysql.username": MARIADB_USER,
      "auth.mysql.password": MARIADB_PASSWORD,
      "auth.mysql.database": MARIADB_DATABASE,
      "auth.mysql.query_timeout": `${TIMEOUT}ms`,
      ...extra,
    };
    files.write(
      `${MYSQL_PLUGIN}.conf`,
      `${Object.entries(conf)
        .map(([k, v]) => `${k} = ${v}`)
        .join("\n")}\n`,
    );
  }

  dbProviderCases({
    plugin: MYSQL_PLUGIN,
    alarm: "auth_mysql_down",
    node,
    server: srv,
    writeConf,
    onErrorKey: "auth.mysql.on_error",
  });

  it("bcrypt and sha512,salt hashes", async () => {
    writeConf({ "auth.mysql.password_hash": "bcrypt" });
    await node().plugins.load(MYSQL_PLUGIN);
    try {
      expect(await connackCode(node(), 5, { clientId: uid(), username: "crypt", password: "pw" })).toBe(0);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "crypt", password: "px" })).toBe(0x86);
      writeConf({
        "auth.mysql.password_hash": "sha512,salt",
        "auth.mysql.auth_query": "select password, salt from mqtt_user where username = '%u' limit 1",
      });
      await node().plugins.reload(MYSQL_PLUGIN);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "suffix", password: "pw" })).toBe(0);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "suffix", password: "pwx9" })).toBe(0x86);
      // alice's hash is sha256: refused under sha512,salt.
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x86);
    } finally {
      await node().plugins.unload(MYSQL_PLUGIN);
    }
  });

  it("a login the server refuses: alarm, on_error answers, and the next good config works", async () => {
    writeConf({ "auth.mysql.password": "wrong" });
    await node().plugins.load(MYSQL_PLUGIN);
    try {
      const t0 = Date.now();
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
      expect(Date.now() - t0).toBeLessThan(TIMEOUT + 1500);
      expect(node().sys.alarms.isActive("auth_mysql_down")).toBe(true);
      writeConf();
      await node().plugins.reload(MYSQL_PLUGIN);
      expect(node().sys.alarms.isActive("auth_mysql_down")).toBe(false);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
    } finally {
      await node().plugins.unload(MYSQL_PLUGIN);
    }
  });
});
