// The placeholders of the database providers as bound values (db-query.ts): SQL statements with
// parameter markers for both dialects (quoted and bare placeholders, literals and identifiers kept,
// escapes), Redis commands as words, and the ACL rows of SQL and Redis (db-acl.ts) as rules.

import { describe, expect, it } from "vitest";
import { compileRules, firstMatch } from "../../src/auth/acl.ts";
import { redisAclRules, sqlAclRules } from "../../src/auth/db-acl.ts";
import { parseServers } from "../../src/auth/db-provider.ts";
import { bindSql, parseRedisCommand, redisArgs, sqlValues } from "../../src/auth/db-query.ts";
import { SQL_ACL_QUERY, SQL_AUTH_QUERY } from "../../src/auth/db-sql.ts";
import type { ClientInfo } from "../../src/broker/types.ts";

const c: ClientInfo = {
  clientId: "dev1",
  username: "alice",
  peerHost: "10.0.0.7",
  peerPort: 5000,
  sockPort: 1883,
  listener: "tcp:external",
  zone: "external",
  protoName: "MQTT",
  protoVer: 4,
  isSuperuser: false,
  isBridge: false,
  mountpoint: undefined,
  peerCert: { cn: "CN", dn: "DN" },
};

describe("SQL placeholders as bound parameters", () => {
  it("the family's default queries", () => {
    expect(bindSql(SQL_AUTH_QUERY, "pgsql")).toEqual({
      text: "select password from mqtt_user where username = $1 limit 1",
      params: ["u"],
    });
    const acl = bindSql(SQL_ACL_QUERY, "mysql");
    expect(acl.text).toBe(
      "select allow, ipaddr, username, clientid, access, topic from mqtt_acl where ipaddr = ? or username = ? or username = '$all' or clientid = ?",
    );
    expect(sqlValues(acl, c)).toEqual(["10.0.0.7", "alice", "dev1"]);
    expect(sqlValues(bindSql(SQL_ACL_QUERY, "pgsql"), { ...c, username: undefined })).toEqual([
      "10.0.0.7",
      null,
      "dev1",
    ]);
  });

  it("bare placeholders, %C %d, literals and identifiers kept, escapes", () => {
    const b = bindSql(`select "a'%u" from t where x = %C and y = '%d' and z like 'a%u%' and w = 'it''s %c'`, "pgsql");
    expect(b.text).toBe(`select "a'%u" from t where x = $1 and y = $2 and z like 'a%u%' and w = 'it''s %c'`);
    expect(sqlValues(b, c)).toEqual(["CN", "DN"]);
    const m = bindSql("select 1 from t where a = 'x\\'%u' and b = '%c' and `c%u` = 1", "mysql");
    expect(m.text).toBe("select 1 from t where a = 'x\\'%u' and b = ? and `c%u` = 1");
    expect(m.params).toEqual(["c"]);
    // % not followed by a placeholder letter is text.
    expect(bindSql("select '%x' , 5 % 2", "mysql")).toEqual({ text: "select '%x' , 5 % 2", params: [] });
    expect(() => bindSql("select 'open", "pgsql")).toThrow(/unterminated string literal/);
  });
});

describe("Redis commands", () => {
  it("placeholders inside words; each word one argument; a missing value: no command", () => {
    const words = parseRedisCommand("  HMGET   mqtt_user:%u password salt ");
    expect(redisArgs(words, c)).toEqual(["HMGET", "mqtt_user:alice", "password", "salt"]);
    expect(redisArgs(words, { ...c, username: "a b\r\nFLUSHALL" })).toEqual([
      "HMGET",
      "mqtt_user:a b\r\nFLUSHALL",
      "password",
      "salt",
    ]);
    expect(redisArgs(words, { ...c, username: undefined })).toBeUndefined();
    expect(redisArgs(parseRedisCommand("GET k:%c:%a"), c)).toEqual(["GET", "k:dev1:10.0.0.7"]);
    expect(() => parseRedisCommand("  ")).toThrow(/empty command/);
  });
});

describe("ACL rows as rules", () => {
  const decide = (rules: ReturnType<typeof compileRules>, cl: ClientInfo, a: "publish" | "subscribe", t: string) =>
    firstMatch(rules, cl, a, t)?.rule.permission;

  it("SQL rows: allow/deny, $all, ipaddr + clientid together, access, eq, bad rows reported", () => {
    const { rules, bad } = sqlAclRules(
      [
        { allow: 1, ipaddr: null, username: "alice", clientid: null, access: 2, topic: "a/%u" },
        { allow: "0", ipaddr: "10.0.0.0/8", username: null, clientid: "dev1", access: "3", topic: "net/#" },
        { allow: true, ipaddr: "", username: "$all", clientid: "", access: 1, topic: "eq e/#" },
        { allow: 0, ipaddr: null, username: "$all", clientid: null, access: 3, topic: "#" },
        { allow: 2, username: "x", access: 1, topic: "t" },
        { allow: 1, username: "x", access: 4, topic: "t" },
        { allow: 1, access: 1, topic: "t" },
        { allow: 1, ipaddr: "999.1.1.1", access: 1, topic: "t" },
      ],
      "q",
    );
    expect(bad).toEqual([
      "q row 5: allow must be 1 or 0",
      "q row 6: access must be 1, 2 or 3",
      "q row 7: no ipaddr, username or clientid",
      'q row 8: invalid IP address "999.1.1.1"',
    ]);
    const r = compileRules(rules);
    expect(decide(r, c, "publish", "a/alice")).toBe("allow");
    expect(decide(r, c, "publish", "net/1")).toBe("deny");
    expect(decide(r, { ...c, peerHost: "192.168.1.1" }, "publish", "net/1")).toBe("deny"); // the `#` row
    expect(decide(r, c, "subscribe", "e/#")).toBe("allow");
    expect(decide(r, c, "subscribe", "e/1")).toBe("deny");
  });

  it("Redis hash: topic -> 1 subscribe, 2 publish, 3 pubsub", () => {
    const { rules, bad } = redisAclRules({ "s/#": "1", "p/%c": "2", "b/+": "3", "x/y": "9" }, "h");
    expect(bad).toEqual(['h x/y: access must be 1, 2 or 3, not "9"']);
    const r = compileRules(rules);
    expect(decide(r, c, "subscribe", "s/1")).toBe("allow");
    expect(decide(r, c, "publish", "s/1")).toBeUndefined();
    expect(decide(r, c, "publish", "p/dev1")).toBe("allow");
    expect(decide(r, c, "publish", "b/1")).toBe("allow");
    expect(decide(r, c, "subscribe", "b/1")).toBe("allow");
  });

  it("servers: host:port lists, IPv6, default port, errors", () => {
    expect(parseServers("h1:1, [::1]:2,h3", 9)).toEqual([
      { host: "h1", port: 1 },
      { host: "::1", port: 2 },
      { host: "h3", port: 9 },
    ]);
    expect(() => parseServers("h:99999", 9)).toThrow(/invalid port/);
    expect(() => parseServers("", 9)).toThrow(/no server/);
  });
});
