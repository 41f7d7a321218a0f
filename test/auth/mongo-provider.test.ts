// svc_auth_mongo. No MongoDB can be installed here: against a real server only when MONGO_URL is
// set (`mongodb://[user:pw@]host:port[/?authSource=admin]`; a fresh database is used and dropped),
// with the shared answers of db-cases.ts (allow, deny, ignore to the next provider, ACL documents,
// superuser) and a server that cannot be reached (CONNACK within the timeout, alarm, on_error).
// Without a server: the parts that need none — selectors with placeholders, user documents
// with password / salt fields and hashes, ACL documents to rules, and the configuration file.

import { randomBytes } from "node:crypto";
import { MongoClient } from "mongodb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { compileRules, firstMatch } from "../../src/auth/acl.ts";
import { mongoAclRules } from "../../src/auth/db-acl.ts";
import { parseSelector, selectorDoc } from "../../src/auth/db-query.ts";
import { loadMongoSettings, MONGO_PLUGIN, mongoOptions, userFromDoc } from "../../src/auth/mongo-provider.ts";
import { checkPassword, hashPassword, parseHashSpec } from "../../src/auth/password-hash.ts";
import type { AclAction } from "../../src/broker/hookpoints.ts";
import type { ClientInfo } from "../../src/broker/types.ts";
import { freePort, skippedSuite } from "../helpers/backends/process.ts";
import { clientInfo } from "../helpers/client-info.ts";
import { dbAuthCases, TIMEOUT } from "./db-cases.ts";
import { connackCode, uid, useNode, useTempDir } from "./helpers.ts";

function client(over: Partial<ClientInfo> = {}): ClientInfo {
  return clientInfo({ username: "alice", peerPort: 5000, listener: "tcp:external", ...over });
}

describe("svc_auth_mongo without a server", () => {
  it("selectors: placeholders become string values; a missing value means no query", () => {
    const sel = parseSelector("username=%u, clientid=%c,cn=%C,x=pre-%u-%a");
    // No certificate: %C has no value, so no query at all.
    expect(selectorDoc(sel, client())).toBeUndefined();
    const withCert = client({ peerCert: { cn: "CN1", dn: "DN1" } });
    expect(selectorDoc(sel, withCert)).toEqual({
      username: "alice",
      clientid: "c1",
      cn: "CN1",
      x: "pre-alice-127.0.0.1",
    });
    expect(selectorDoc(parseSelector("username=%u"), client({ username: undefined }))).toBeUndefined();
    // A user name that looks like an operator stays a string.
    expect(selectorDoc(parseSelector("username=%u"), client({ username: '{"$ne":null}' }))).toEqual({
      username: '{"$ne":null}',
    });
    expect(() => parseSelector("$where=1")).toThrow(/operators are not allowed/);
    expect(() => parseSelector("username")).toThrow(/expected field=value/);
    expect(() => parseSelector(" , ")).toThrow(/empty selector/);
  });

  it("user documents: password and salt fields, the hash, is_superuser", async () => {
    const spec = parseHashSpec("salt,sha256");
    const doc = { username: "alice", password: await hashPassword(spec, "pw", "s1"), salt: "s1", is_superuser: true };
    const u = userFromDoc(doc, "password", "salt");
    expect(u).toEqual({ password: doc.password, salt: "s1", superuser: true });
    expect(await checkPassword(spec, u?.password ?? "", "pw", u?.salt)).toBe(true);
    expect(await checkPassword(spec, u?.password ?? "", "px", u?.salt)).toBe(false);
    expect(userFromDoc({ pw: "x" }, "password", undefined)).toEqual({ password: undefined, salt: "" });
    expect(userFromDoc({ password: "x", is_superuser: 0 }, "password", undefined)).toEqual({
      password: "x",
      salt: "",
      superuser: false,
    });
    expect(userFromDoc(null, "password", undefined)).toBeUndefined();
  });

  it("ACL documents: publish / subscribe / pubsub arrays as an allow list with %u, %c and eq", () => {
    const { rules, bad } = mongoAclRules(
      [
        { username: "alice", publish: ["p/#", "users/%u/#"], subscribe: ["s/+"] },
        { username: "alice", pubsub: ["both/%c", "eq all/#"], publish: "not-a-list", subscribe: [7] },
      ],
      MONGO_PLUGIN,
    );
    expect(bad).toEqual([
      `${MONGO_PLUGIN} document 2 publish: not an array`,
      `${MONGO_PLUGIN} document 2 subscribe: 7 is not a topic`,
    ]);
    const compiled = compileRules(rules);
    const c = client();
    const allowed = (action: AclAction, topic: string) => firstMatch(compiled, c, action, topic)?.rule.permission;
    expect(allowed("publish", "p/1")).toBe("allow");
    expect(allowed("publish", "users/alice/x")).toBe("allow");
    expect(allowed("publish", "users/bob/x")).toBeUndefined();
    expect(allowed("subscribe", "p/1")).toBeUndefined();
    expect(allowed("subscribe", "s/x")).toBe("allow");
    expect(allowed("publish", "both/c1")).toBe("allow");
    expect(allowed("subscribe", "both/c1")).toBe("allow");
    expect(allowed("subscribe", "all/#")).toBe("allow");
    expect(allowed("subscribe", "all/x")).toBeUndefined();
  });

  const files = useTempDir();

  it("configuration: family defaults, ACL selectors in order, driver options, errors as file:line", () => {
    files.write(`${MONGO_PLUGIN}.conf`, "");
    const d = loadMongoSettings(files.dir);
    expect(d.auth).toEqual({
      collection: "mqtt_user",
      passwordField: "password",
      saltField: undefined,
      selector: [["username", "%u"]],
    });
    expect(d.hash).toEqual(parseHashSpec("sha256"));
    expect(d.super).toEqual({ collection: "mqtt_user", field: "is_superuser", selector: [["username", "%u"]] });
    expect(d.acl).toEqual({ collection: "mqtt_acl", selectors: [[["username", "%u"]]] });
    expect(d.timeout).toBe(5000);
    expect(mongoOptions(d)).toMatchObject({ maxPoolSize: 8, serverSelectionTimeoutMS: 5000, directConnection: true });
    files.write(
      `${MONGO_PLUGIN}.conf`,
      [
        "auth.mongo.type = rs",
        "auth.mongo.rs_set_name = rs0",
        "auth.mongo.server = h1:27017,h2",
        "auth.mongo.login = svc",
        "auth.mongo.password = pw",
        "auth.mongo.auth_query.password_field = pass,salt",
        "auth.mongo.super_query = off",
        "auth.mongo.acl_query.selector.10 = clientid=%c",
        "auth.mongo.acl_query.selector.2 = username=$all",
        "",
      ].join("\n"),
    );
    const s = loadMongoSettings(files.dir);
    expect(s.servers).toEqual([
      { host: "h1", port: 27017 },
      { host: "h2", port: 27017 },
    ]);
    expect(s.auth.passwordField).toBe("pass");
    expect(s.auth.saltField).toBe("salt");
    expect(s.super).toBeUndefined();
    expect(s.acl?.selectors).toEqual([[["username", "%u"]], [["username", "$all"]], [["clientid", "%c"]]]);
    expect(mongoOptions(s)).toMatchObject({
      replicaSet: "rs0",
      auth: { username: "svc", password: "pw" },
      authSource: "mqtt",
    });
    files.write(
      `${MONGO_PLUGIN}.conf`,
      "auth.mongo.type = rs\nauth.mongo.auth_query.selector = username\nauth.mongo.auth_query.password_hash = pbkdf2,sha256\n",
    );
    const file = `${files.dir}/${MONGO_PLUGIN}.conf`;
    expect(() => loadMongoSettings(files.dir)).toThrow(
      expect.objectContaining({
        issues: [
          `${file}:1: auth.mongo.rs_set_name must be set for type rs`,
          expect.stringMatching(new RegExp(`^${file}:2: auth.mongo.auth_query.selector: invalid selector`)),
          expect.stringMatching(new RegExp(`^${file}:3: auth.mongo.auth_query.password_hash: invalid password hash`)),
        ],
      }),
    );
  });
});

const MONGO_URL = process.env.MONGO_URL;
if (MONGO_URL === undefined || MONGO_URL === "") {
  console.warn("!!! svc_auth_mongo against a server: SKIPPED, set MONGO_URL=mongodb://host:port to run it !!!");
}

const describeMongo =
  MONGO_URL === undefined || MONGO_URL === ""
    ? (name: string, _body: () => void) => skippedSuite(name, "needs MONGO_URL (a MongoDB server)")
    : describe;

describeMongo("svc_auth_mongo against MongoDB (MONGO_URL)", () => {
  const url = new URL(MONGO_URL ?? "mongodb://127.0.0.1:27017");
  const database = `svc_test_${randomBytes(4).toString("hex")}`;
  const files = useTempDir();
  const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });
  let mongo: MongoClient | undefined;

  beforeAll(async () => {
    mongo = new MongoClient(url.toString());
    const db = mongo.db(database);
    const sha = (pw: string) => hashPassword(parseHashSpec("sha256"), pw);
    await db.collection("mqtt_user").insertMany([
      { username: "alice", password: await sha("pw") },
      { username: "admin", password: await sha("pw"), is_superuser: true },
    ]);
    await db.collection("mqtt_acl").insertMany([
      { username: "alice", publish: ["ok/#", "users/%u/#"], subscribe: ["ok/#"] },
      { username: "admin", publish: ["ok/#"] },
    ]);
  }, 30_000);
  afterAll(async () => {
    await mongo?.db(database).dropDatabase();
    await mongo?.close();
  });

  function conf(extra: Record<string, string>): string {
    const c: Record<string, string> = {
      "auth.mongo.server": url.host,
      "auth.mongo.database": database,
      "auth.mongo.query_timeout": `${TIMEOUT}ms`,
      ...(url.username === ""
        ? {}
        : {
            "auth.mongo.login": decodeURIComponent(url.username),
            "auth.mongo.password": decodeURIComponent(url.password),
            "auth.mongo.auth_source": url.searchParams.get("authSource") ?? "admin",
          }),
      ...extra,
    };
    return `${Object.entries(c)
      .map(([k, v]) => `${k} = ${v}`)
      .join("\n")}\n`;
  }
  const writeConf = (extra: Record<string, string> = {}) => void files.write(`${MONGO_PLUGIN}.conf`, conf(extra));

  dbAuthCases({ plugin: MONGO_PLUGIN, node, writeConf });

  it("a server that cannot be reached: CONNACK within the timeout, alarm, on_error = deny", async () => {
    const closed = await freePort();
    writeConf({ "auth.mongo.server": `127.0.0.1:${closed}`, "auth.mongo.on_error": "deny", "auth.mongo.login": "" });
    await node().plugins.load(MONGO_PLUGIN);
    try {
      const t0 = Date.now();
      expect(await connackCode(node(), 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
      expect(Date.now() - t0).toBeLessThan(TIMEOUT + 1500);
      expect(node().sys.alarms.isActive("auth_mongo_down")).toBe(true);
    } finally {
      await node().plugins.unload(MONGO_PLUGIN);
    }
  });
});
