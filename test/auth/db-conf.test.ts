// The shipped configuration files of the database providers (etc/plugins/svc_auth_{mysql,pgsql,
// redis,mongo}.conf): every key of each plugin's schema is documented there, and the files load
// (their keys are commented out: the family defaults apply).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { bindSql } from "../../src/auth/db-query.ts";
import { SQL_ACL_QUERY, sqlSchema } from "../../src/auth/db-sql.ts";
import { loadMongoSettings, MONGO_CONF_SCHEMA, MONGO_PLUGIN } from "../../src/auth/mongo-provider.ts";
import { loadMysqlSettings, MYSQL_CONF, MYSQL_PLUGIN } from "../../src/auth/mysql-provider.ts";
import { loadPgsqlSettings, PGSQL_CONF, PGSQL_PLUGIN } from "../../src/auth/pgsql-provider.ts";
import { loadRedisSettings, REDIS_CONF_SCHEMA, REDIS_PLUGIN } from "../../src/auth/redis-provider.ts";

const dir = join(import.meta.dirname, "../../etc/plugins");

describe("shipped database provider files", () => {
  const cases = [
    [MYSQL_PLUGIN, sqlSchema(MYSQL_CONF)],
    [PGSQL_PLUGIN, sqlSchema(PGSQL_CONF)],
    [REDIS_PLUGIN, REDIS_CONF_SCHEMA],
    [MONGO_PLUGIN, MONGO_CONF_SCHEMA],
  ] as const;
  for (const [plugin, schema] of cases) {
    it(`${plugin}.conf documents every key with its default`, () => {
      const text = readFileSync(join(dir, `${plugin}.conf`), "utf8");
      for (const [key, entry] of Object.entries(schema)) {
        const k = key.replace("$n", "1");
        const line = text.split("\n").find((l) => l.startsWith(`# ${k} =`));
        expect(line, `${plugin}: ${k}`).toBeDefined();
        if (entry.default !== undefined) expect(line?.slice(`# ${k} =`.length).trim(), k).toBe(entry.default);
      }
    });
  }

  it("the files load with the family defaults", () => {
    const my = loadMysqlSettings(dir);
    expect(my.target).toBe("127.0.0.1:3306");
    expect(my.acl).toEqual(bindSql(SQL_ACL_QUERY, "mysql"));
    expect(my.hash).toEqual({ kind: "digest", digest: "sha256", salt: "none" });
    expect(loadPgsqlSettings(dir)).toMatchObject({ target: "127.0.0.1:5432", username: "root", database: "mqtt" });
    const r = loadRedisSettings(dir);
    expect(r).toMatchObject({ target: "127.0.0.1:6379", auth: ["HMGET", "mqtt_user:%u", "password"], timeout: 5000 });
    expect(r.hash).toEqual({ kind: "digest", digest: "plain", salt: "none" });
    expect(loadMongoSettings(dir)).toMatchObject({ target: "127.0.0.1:27017", onError: "ignore" });
  });
});
