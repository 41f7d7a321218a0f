// svc_auth_redis: authentication, superuser and ACL from Redis (spec section 5, emqx-facts §5).
// Configured in `<plugins.etc_dir>/svc_auth_redis.conf`; how a back end that is down is handled:
// db-provider.ts. Commands are words; placeholders (`%u %c %a %C %d`) are replaced inside a word,
// which is sent as one argument (a client without the value, e.g. no user name: no command, the
// client is unknown here).
//
// - auth_cmd (`HMGET mqtt_user:%u password`): the stored hash, then the salt (`HMGET ... password
//   salt`); a nil hash: unknown user. A command answering one value (`HGET`, `GET`) gives the hash.
// - super_cmd (`HGET mqtt_user:%u is_superuser`): "1" / "true" = superuser. Empty: none.
// - acl_cmd (`HGETALL mqtt_acl:%u`): topic -> 1 subscribe, 2 publish, 3 pubsub; a client with rules
//   may do only what they allow. Empty: no ACL.
// `auth.redis.type`: single (`pool` connections to one server, used in turn), sentinel (`server`
// lists the sentinels, `sentinel` names the master) or cluster (`server` lists seed nodes). ioredis
// reconnects by itself; commands wait for the connection within `query_timeout`.

import type { Cluster, Redis, RedisOptions } from "ioredis";
import type { ClientInfo } from "../broker/types.ts";
import { loadPluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import { svcConfHint } from "./credential-provider.ts";
import { type DbAclRules, redisAclRules } from "./db-acl.ts";
import {
  asText,
  type DbBackend,
  type DbCommonSettings,
  type DbFamily,
  DbProvider,
  type DbUser,
  type HostPort,
  hashEntry,
  isTruthy,
  originOf,
  poolEntry,
  readCommon,
  readQuery,
  readServers,
  serverEntry,
  throwIssues,
  timeoutEntries,
} from "./db-provider.ts";
import { parseRedisCommand, redisArgs } from "./db-query.ts";
import { driver } from "./driver.ts";
import type { BackendProviderDeps } from "./http-provider.ts";

export const REDIS_PLUGIN = "svc_auth_redis";

export const REDIS_CONF_SCHEMA: PluginConfSchema = {
  "auth.redis.type": {
    type: "enum",
    values: ["single", "sentinel", "cluster"],
    default: "single",
    description: "Deployment: single server, sentinel, or cluster.",
  },
  ...serverEntry("redis", "127.0.0.1:6379"),
  "auth.redis.sentinel": { type: "string", default: "", description: "Master name (type sentinel)." },
  ...poolEntry("redis"),
  "auth.redis.database": { type: "integer", default: "0", min: 0, description: "Database number." },
  "auth.redis.password": { type: "string", default: "", secret: true, description: "Password (empty: none)." },
  ...timeoutEntries("redis"),
  "auth.redis.auth_cmd": {
    type: "string",
    default: "HMGET mqtt_user:%u password",
    description: "Command reading the stored password (and salt).",
  },
  ...hashEntry("auth.redis.password_hash", "plain"),
  "auth.redis.super_cmd": {
    type: "string",
    default: "HGET mqtt_user:%u is_superuser",
    description: "Command reading the superuser flag (empty: no superusers).",
  },
  "auth.redis.acl_cmd": {
    type: "string",
    default: "HGETALL mqtt_acl:%u",
    description: "Command reading the ACL hash, topic -> 1 sub, 2 pub, 3 pubsub (empty: no ACL).",
  },
};

export interface RedisSettings extends DbCommonSettings {
  kind: "single" | "sentinel" | "cluster";
  servers: HostPort[];
  sentinel: string;
  pool: number;
  database: number;
  password: string;
  auth: string[];
  super: string[] | undefined;
  acl: string[] | undefined;
}

export function loadRedisSettings(dir: string): RedisSettings {
  const conf = loadPluginConf(dir, REDIS_PLUGIN, REDIS_CONF_SCHEMA, { hint: svcConfHint });
  const issues: string[] = [];
  const kind = conf.get("auth.redis.type") as RedisSettings["kind"];
  const servers = readServers(conf, "auth.redis.server", kind === "sentinel" ? 26379 : 6379, REDIS_PLUGIN, issues);
  const sentinel = conf.get("auth.redis.sentinel") as string;
  if (kind === "sentinel" && sentinel === "") {
    issues.push(`${originOf(conf, "auth.redis.type", REDIS_PLUGIN)}: auth.redis.sentinel must name the master`);
  }
  if (kind === "single" && servers.length > 1) {
    issues.push(`${originOf(conf, "auth.redis.server", REDIS_PLUGIN)}: auth.redis.server: one server for type single`);
  }
  const auth = readQuery(conf, "auth.redis.auth_cmd", REDIS_PLUGIN, issues, parseRedisCommand);
  if (auth === undefined && issues.length === 0) {
    issues.push(`${conf.file ?? REDIS_PLUGIN}: auth.redis.auth_cmd must be set`);
  }
  const settings: RedisSettings = {
    kind,
    servers,
    sentinel,
    target: servers.map((s) => `${s.host}:${s.port}`).join(","),
    pool: conf.get("auth.redis.pool") as number,
    database: conf.get("auth.redis.database") as number,
    password: conf.get("auth.redis.password") as string,
    ...readCommon(conf, "redis", "auth.redis.password_hash", REDIS_PLUGIN, issues),
    auth: auth ?? [],
    super: readQuery(conf, "auth.redis.super_cmd", REDIS_PLUGIN, issues, parseRedisCommand),
    acl: readQuery(conf, "auth.redis.acl_cmd", REDIS_PLUGIN, issues, parseRedisCommand),
  };
  throwIssues(issues);
  return settings;
}

/** The user from an auth_cmd reply; undefined when the hash is nil. */
export function userFromReply(reply: unknown): DbUser | undefined {
  const list = Array.isArray(reply) ? reply : [reply];
  const password = asText(list[0]);
  if (password === undefined) return undefined;
  return { password, salt: asText(list[1]) ?? "" };
}

/** An HGETALL reply (a flat field, value list, or an object) as an object. */
export function hashFromReply(reply: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (Array.isArray(reply)) {
    for (let i = 0; i + 1 < reply.length; i += 2) out[asText(reply[i]) ?? ""] = asText(reply[i + 1]) ?? "";
  } else if (reply !== null && typeof reply === "object") {
    for (const [k, v] of Object.entries(reply)) out[k] = asText(v) ?? "";
  }
  return out;
}

type Conn = Redis | Cluster;

function openRedis(s: RedisSettings, logger: { debug(o: object, m?: string): void }): DbBackend {
  const ioredis = driver<typeof import("ioredis")>("ioredis");
  const common: RedisOptions = {
    db: s.database,
    ...(s.password === "" ? {} : { password: s.password }),
    connectTimeout: s.timeout,
    commandTimeout: s.timeout,
    // Commands wait for a reconnection (within the deadline), then fail after one more attempt.
    enableOfflineQueue: true,
    maxRetriesPerRequest: 1,
    retryStrategy: (times) => Math.min(times * 100, 1000),
  };
  const conns: Conn[] = [];
  if (s.kind === "cluster") {
    conns.push(
      new ioredis.Cluster(s.servers, { redisOptions: common, clusterRetryStrategy: (t) => Math.min(t * 100, 1000) }),
    );
  } else {
    for (let i = 0; i < s.pool; i++) {
      const at =
        s.kind === "sentinel"
          ? { sentinels: s.servers, name: s.sentinel }
          : { host: s.servers[0].host, port: s.servers[0].port };
      conns.push(new ioredis.Redis({ ...common, ...at }));
    }
  }
  for (const c of conns) {
    c.on("error", (err: Error) =>
      logger.debug({ plugin: REDIS_PLUGIN, reason: err.message }, "Redis connection error"),
    );
  }
  let next = 0;
  const run = async (words: readonly string[], c: ClientInfo): Promise<unknown> => {
    const args = redisArgs(words, c);
    if (args === undefined) return null;
    const conn = conns[next++ % conns.length];
    return conn.call(args[0], args.slice(1));
  };
  const superCmd = s.super;
  const aclCmd = s.acl;
  return {
    findUser: async (c) => userFromReply(await run(s.auth, c)),
    ...(superCmd === undefined ? {} : { isSuperuser: async (c: ClientInfo) => isTruthy(await run(superCmd, c)) }),
    ...(aclCmd === undefined
      ? {}
      : {
          aclRules: async (c: ClientInfo): Promise<DbAclRules> =>
            redisAclRules(hashFromReply(await run(aclCmd, c)), REDIS_PLUGIN),
        }),
    close: async () => {
      for (const c of conns) c.disconnect();
    },
  };
}

export const REDIS_FAMILY: DbFamily<RedisSettings> = {
  plugin: REDIS_PLUGIN,
  key: "redis",
  label: "Redis",
  description: "Authentication and ACL from Redis",
  aclStyle: "allow_list",
  loadSettings: loadRedisSettings,
  open: openRedis,
};

export function redisProvider(deps: BackendProviderDeps): DbProvider<RedisSettings> {
  return new DbProvider(REDIS_FAMILY, deps);
}
