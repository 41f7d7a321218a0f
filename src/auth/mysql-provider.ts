// svc_auth_mysql: authentication, superuser and ACL from MySQL / MariaDB (spec section 5,
// emqx-facts §5). Configured in `<plugins.etc_dir>/svc_auth_mysql.conf`; what the queries answer
// and how a back end that is down is handled: db-sql.ts, db-provider.ts. A mysql2 promise pool of
// `auth.mysql.pool` connections, opened on demand and again after a failure; statements are
// prepared with the placeholders as bound parameters and bounded by `auth.mysql.query_timeout`.

import type { Logger } from "../telemetry/logger.ts";
import { type DbFamily, DbProvider } from "./db-provider.ts";
import { loadSqlSettings, type SqlFamilyConf, type SqlSettings, sqlBackend } from "./db-sql.ts";
import { driver } from "./driver.ts";
import type { BackendProviderDeps } from "./http-provider.ts";

export const MYSQL_PLUGIN = "svc_auth_mysql";

export const MYSQL_CONF: SqlFamilyConf = {
  key: "mysql",
  plugin: MYSQL_PLUGIN,
  dialect: "mysql",
  defaultPort: 3306,
  defaultUser: "root",
  extra: {},
};

export function loadMysqlSettings(dir: string): SqlSettings {
  return loadSqlSettings(dir, MYSQL_CONF).settings;
}

function openMysql(s: SqlSettings, logger: Logger) {
  const mysql = driver<typeof import("mysql2/promise")>("mysql2/promise");
  const pool = mysql.createPool({
    host: s.server.host,
    port: s.server.port,
    user: s.username,
    password: s.password,
    database: s.database,
    connectionLimit: s.pool,
    connectTimeout: s.timeout,
    enableKeepAlive: true,
    idleTimeout: 30_000,
  });
  pool.pool.on("error", (err: Error) =>
    logger.debug({ plugin: MYSQL_PLUGIN, reason: err.message }, "MySQL connection lost"),
  );
  return sqlBackend(
    s,
    async (b, values) => {
      const [rows, fields] = await pool.execute({ sql: b.text, values, timeout: s.timeout });
      if (!Array.isArray(rows)) return { rows: [], fields: [] };
      return { rows: rows as Record<string, unknown>[], fields: (fields ?? []).map((f) => f.name) };
    },
    () => pool.end(),
    MYSQL_PLUGIN,
  );
}

export const MYSQL_FAMILY: DbFamily<SqlSettings> = {
  plugin: MYSQL_PLUGIN,
  key: "mysql",
  label: "MySQL",
  description: "Authentication and ACL from MySQL",
  aclStyle: "first_match",
  loadSettings: loadMysqlSettings,
  open: openMysql,
};

export function mysqlProvider(deps: BackendProviderDeps): DbProvider<SqlSettings> {
  return new DbProvider(MYSQL_FAMILY, deps);
}
