// svc_auth_pgsql: authentication, superuser and ACL from PostgreSQL (spec section 5, emqx-facts §5).
// Configured in `<plugins.etc_dir>/svc_auth_pgsql.conf`; what the queries answer and how a back
// end that is down is handled: db-sql.ts, db-provider.ts. A `pg` pool of `auth.pgsql.pool`
// connections, opened on demand and again after a failure; every query is bounded by
// `auth.pgsql.query_timeout` (connection and wait for a pool slot included).

import type { Logger } from "../telemetry/logger.ts";
import { type DbFamily, DbProvider } from "./db-provider.ts";
import { loadSqlSettings, type SqlFamilyConf, type SqlSettings, sqlBackend } from "./db-sql.ts";
import { driver } from "./driver.ts";
import type { BackendProviderDeps } from "./http-provider.ts";

export const PGSQL_PLUGIN = "svc_auth_pgsql";

export const PGSQL_CONF: SqlFamilyConf = {
  key: "pgsql",
  plugin: PGSQL_PLUGIN,
  dialect: "pgsql",
  defaultPort: 5432,
  defaultUser: "root",
  extra: {
    "auth.pgsql.encoding": { type: "string", default: "utf8", nonEmpty: true, description: "Client encoding." },
  },
};

interface PgSettings extends SqlSettings {
  encoding: string;
}

export function loadPgsqlSettings(dir: string): PgSettings {
  const { settings, conf } = loadSqlSettings(dir, PGSQL_CONF);
  return { ...settings, encoding: conf.get("auth.pgsql.encoding") as string };
}

function openPgsql(s: PgSettings, logger: Logger) {
  const pg = driver<typeof import("pg")>("pg");
  const pool = new pg.Pool({
    host: s.server.host,
    port: s.server.port,
    user: s.username,
    password: s.password,
    database: s.database,
    max: s.pool,
    client_encoding: s.encoding,
    connectionTimeoutMillis: s.timeout,
    query_timeout: s.timeout,
    idleTimeoutMillis: 30_000,
    keepAlive: true,
  });
  // An idle connection losing its server: the pool drops it and opens another when needed.
  pool.on("error", (err) => logger.debug({ plugin: PGSQL_PLUGIN, reason: err.message }, "PostgreSQL connection lost"));
  return sqlBackend(
    s,
    async (b, values) => {
      const r = await pool.query({ text: b.text, values });
      return { rows: r.rows as Record<string, unknown>[], fields: r.fields.map((f) => f.name) };
    },
    () => pool.end(),
    PGSQL_PLUGIN,
  );
}

export const PGSQL_FAMILY: DbFamily<PgSettings> = {
  plugin: PGSQL_PLUGIN,
  key: "pgsql",
  label: "PostgreSQL",
  description: "Authentication and ACL from PostgreSQL",
  aclStyle: "first_match",
  loadSettings: loadPgsqlSettings,
  open: openPgsql,
};

export function pgsqlProvider(deps: BackendProviderDeps): DbProvider<PgSettings> {
  return new DbProvider(PGSQL_FAMILY, deps);
}
