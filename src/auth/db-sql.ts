// What svc_auth_mysql and svc_auth_pgsql share (emqx-facts §5): the settings (server, pool, login,
// database, the three queries with their family defaults, sha256, timeout, on_error) and how rows
// become answers. Placeholders become bound parameters (db-query.ts bindSql), never SQL text.
//
// - auth_query: the first row's `password` column (else the first column) is the stored hash, its
//   `salt` column (else a second column) the salt; an `is_superuser` column, when selected, makes
//   the user a superuser without the super query. No row: unknown user.
// - super_query: the first row's first column, true / 1 / "1" / "t" = superuser.
// - acl_query: rows `allow, ipaddr, username, clientid, access, topic` (db-acl.ts).
// An empty super_query or acl_query turns it off.

import type { ClientInfo } from "../broker/types.ts";
import type { SchemaEntry } from "../config/schema-types.ts";
import { loadPluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import { svcConfHint } from "./credential-provider.ts";
import { type DbAclRules, sqlAclRules } from "./db-acl.ts";
import {
  asText,
  type DbBackend,
  type DbCommonSettings,
  type DbUser,
  type HostPort,
  hashEntry,
  isTruthy,
  poolEntry,
  readCommon,
  readQuery,
  readServers,
  serverEntry,
  throwIssues,
  timeoutEntries,
} from "./db-provider.ts";
import { type BoundSql, bindSql, type SqlDialect, sqlValues } from "./db-query.ts";

export const SQL_AUTH_QUERY = "select password from mqtt_user where username = '%u' limit 1";
export const SQL_SUPER_QUERY = "select is_superuser from mqtt_user where username = '%u' limit 1";
export const SQL_ACL_QUERY =
  "select allow, ipaddr, username, clientid, access, topic from mqtt_acl where ipaddr = '%a' or username = '%u' or username = '$all' or clientid = '%c'";

export interface SqlSettings extends DbCommonSettings {
  server: HostPort;
  pool: number;
  username: string;
  password: string;
  database: string;
  auth: BoundSql;
  super: BoundSql | undefined;
  acl: BoundSql | undefined;
}

export interface SqlFamilyConf {
  key: "mysql" | "pgsql";
  plugin: string;
  dialect: SqlDialect;
  defaultPort: number;
  defaultUser: string;
  /** Family-specific keys. */
  extra: Record<string, SchemaEntry>;
}

export function sqlSchema(f: SqlFamilyConf): PluginConfSchema {
  const k = `auth.${f.key}`;
  const q = (name: string, def: string, what: string): Record<string, SchemaEntry> => ({
    [`${k}.${name}`]: { type: "string", default: def, description: what },
  });
  return {
    ...serverEntry(f.key, `127.0.0.1:${f.defaultPort}`),
    ...poolEntry(f.key),
    [`${k}.username`]: { type: "string", default: f.defaultUser, description: "Database user." },
    [`${k}.password`]: { type: "string", default: "", secret: true, description: "Database user's password." },
    [`${k}.database`]: { type: "string", default: "mqtt", nonEmpty: true, description: "Database name." },
    ...f.extra,
    ...timeoutEntries(f.key),
    ...q("auth_query", SQL_AUTH_QUERY, "Query selecting the stored password (and salt) of a client."),
    ...hashEntry(`${k}.password_hash`, "sha256"),
    ...q("super_query", SQL_SUPER_QUERY, "Query selecting the superuser flag (empty: no superusers)."),
    ...q("acl_query", SQL_ACL_QUERY, "Query selecting the ACL rows of a client (empty: no ACL rules)."),
  };
}

/** Reads the settings common to both SQL families; the ConfigError names file:line. */
export function loadSqlSettings(
  dir: string,
  f: SqlFamilyConf,
): { settings: SqlSettings; conf: ReturnType<typeof loadPluginConf> } {
  const conf = loadPluginConf(dir, f.plugin, sqlSchema(f), { hint: svcConfHint });
  const k = `auth.${f.key}`;
  const issues: string[] = [];
  const bind = (text: string) => bindSql(text, f.dialect);
  const server = readServers(conf, `${k}.server`, f.defaultPort, f.plugin, issues);
  if (server.length > 1) issues.push(`${conf.file ?? f.plugin}: ${k}.server: one server only`);
  const auth = readQuery(conf, `${k}.auth_query`, f.plugin, issues, bind);
  if (auth === undefined && issues.length === 0) issues.push(`${conf.file ?? f.plugin}: ${k}.auth_query must be set`);
  const settings: SqlSettings = {
    server: server[0],
    target: `${server[0].host}:${server[0].port}`,
    pool: conf.get(`${k}.pool`) as number,
    username: conf.get(`${k}.username`) as string,
    password: conf.get(`${k}.password`) as string,
    database: conf.get(`${k}.database`) as string,
    ...readCommon(conf, f.key, `${k}.password_hash`, f.plugin, issues),
    auth: auth ?? { text: "", params: [] },
    super: readQuery(conf, `${k}.super_query`, f.plugin, issues, bind),
    acl: readQuery(conf, `${k}.acl_query`, f.plugin, issues, bind),
  };
  throwIssues(issues);
  return { settings, conf };
}

/** Rows as objects by column name, and the column names in order. */
export interface SqlResult {
  rows: Record<string, unknown>[];
  fields: string[];
}

/** Runs one bound statement with the client's values. */
export type SqlRunner = (b: BoundSql, values: (string | null)[]) => Promise<SqlResult>;

/** The user from an auth_query result; undefined when no row. */
export function userFromRows(r: SqlResult): DbUser | undefined {
  const row = r.rows[0];
  if (row === undefined) return undefined;
  const f = r.fields.map((n) => n.toLowerCase());
  const col = (name: string, at: number) => {
    const i = f.indexOf(name);
    const field = i >= 0 ? r.fields[i] : r.fields[at];
    return field === undefined ? undefined : row[field];
  };
  const hasSalt = f.includes("salt") || (f.length > 1 && !f.includes("is_superuser"));
  const su = f.indexOf("is_superuser");
  return {
    password: asText(col("password", 0)),
    salt: hasSalt ? (asText(col("salt", 1)) ?? "") : "",
    ...(su >= 0 ? { superuser: isTruthy(row[r.fields[su]]) } : {}),
  };
}

/** The back end of a SQL family over `run`. */
export function sqlBackend(s: SqlSettings, run: SqlRunner, close: () => Promise<void>, source: string): DbBackend {
  const q = (b: BoundSql, c: ClientInfo) => run(b, sqlValues(b, c));
  const superQ = s.super;
  const aclQ = s.acl;
  return {
    findUser: async (c) => userFromRows(await q(s.auth, c)),
    ...(superQ === undefined
      ? {}
      : {
          isSuperuser: async (c: ClientInfo) => {
            const r = await q(superQ, c);
            const row = r.rows[0];
            return row !== undefined && r.fields.length > 0 && isTruthy(row[r.fields[0]]);
          },
        }),
    ...(aclQ === undefined
      ? {}
      : { aclRules: async (c: ClientInfo): Promise<DbAclRules> => sqlAclRules((await q(aclQ, c)).rows, source) }),
    close,
  };
}
