// What the database providers share (svc_auth_mysql, svc_auth_pgsql, svc_auth_redis,
// svc_auth_mongo; emqx-facts §5). Each family supplies its settings and a back end (a pool that
// reconnects by itself) answering three questions: the user's stored password (and salt), whether
// the user is a superuser, and the user's ACL rules. This file turns the answers into the chain's:
//
// - unknown user: ignore (the next provider, then `allow_anonymous`, decides);
// - known user: the password the client sent is checked with `password_hash` against the stored
//   one (and its salt); no password or a mismatch: 0x86 bad user name or password (3.1.1: 4);
// - a match: allowed, a superuser when the user's row says so or the superuser query answers a
//   true value (an error there: not a superuser); superusers skip ACL checks (the core);
// - ACL: the rules read for the client decide (db-acl.ts: first match for SQL rows, an allow list
//   for Redis and Mongo); no rules: the next ACL source, then the rule file, decides.
//
// Every back-end call is bounded by the family's `query_timeout` (a wait for a pool connection
// included), so a CONNECT is answered in time. A back end that cannot be reached, fails or is too
// slow is logged, raises the alarm `auth_<family>_down`, and the answer is `auth.<family>.on_error`:
// `ignore` (the default: next provider / ACL source) or `deny` (0x87 at CONNECT; a denied publish
// or subscribe, not cached). The pool reconnects by itself; the first answer clears the alarm.

import type { AclAction, Credentials } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { ConfigError } from "../config/config-error.ts";
import type { SchemaEntry } from "../config/schema-types.ts";
import { RC } from "../mqtt/reason-codes.ts";
import type { PluginConf } from "../plugins/plugin-conf.ts";
import type { Plugin } from "../plugins/registry.ts";
import type { Logger } from "../telemetry/logger.ts";
import { type AclDecision, type AclSource, compileRules, firstMatch } from "./acl.ts";
import { BackendHealth } from "./backend-health.ts";
import { ALLOW, type AuthAnswer, type AuthProvider, BAD_PASSWORD } from "./chain.ts";
import type { DbAclRules } from "./db-acl.ts";
import type { BackendProviderDeps } from "./http-provider.ts";
import { checkPassword, type HashSpec, parseHashSpec } from "./password-hash.ts";

export type OnError = "ignore" | "deny";

/** A user as the back end stores it. */
export interface DbUser {
  /** The stored hash (or plain password); undefined when the record has none. */
  password: string | undefined;
  /** The salt of the salted hashes ("" when none). */
  salt: string;
  /** Set when the record itself tells (an `is_superuser` column / field). */
  superuser?: boolean;
}

/** A family's pool and queries. Every method may reject (the back end failed). */
export interface DbBackend {
  /** The user of a client; undefined: not known to this back end (ignore). */
  findUser(client: ClientInfo): Promise<DbUser | undefined>;
  /** Whether a client is a superuser; absent when no superuser query is configured. */
  isSuperuser?: (client: ClientInfo) => Promise<boolean>;
  /** A client's ACL rules; absent when no ACL query is configured. */
  aclRules?: (client: ClientInfo) => Promise<DbAclRules>;
  /** Closes the pool. */
  close(): Promise<void>;
}

export interface DbCommonSettings {
  hash: HashSpec;
  /** ms, per back-end call. */
  timeout: number;
  onError: OnError;
  /** Where the back end is, for logs and the alarm (`host:port`). */
  target: string;
}

export interface DbFamily<S extends DbCommonSettings> {
  /** `svc_auth_mysql`... */
  plugin: string;
  /** The key's family: `mysql` for `auth.mysql.*` and the alarm `auth_mysql_down`. */
  key: string;
  /** `MySQL`... for log lines. */
  label: string;
  description: string;
  /** `first_match`: SQL rows (a matching row decides, none: no opinion); `allow_list`: Redis,
   *  Mongo (a match allows, rules without a match deny). */
  aclStyle: "first_match" | "allow_list";
  loadSettings(dir: string): S;
  open(settings: S, logger: Logger): DbBackend;
}

/** Truthy values of superuser columns and fields: 1, true, "1", "true", "t" (PostgreSQL). */
export function isTruthy(v: unknown): boolean {
  if (v === true || v === 1 || v === 1n) return true;
  if (typeof v === "string" || Buffer.isBuffer(v)) {
    const s = v.toString().trim().toLowerCase();
    return s === "1" || s === "true" || s === "t" || s === "on";
  }
  return false;
}

/** A database value as text (Buffer columns as UTF-8); undefined for null / undefined. */
export function asText(v: unknown): string | undefined {
  if (v === null || v === undefined) return undefined;
  return Buffer.isBuffer(v) ? v.toString("utf8") : String(v);
}

// ---- settings ----------------------------------------------------------------------------------------

export function serverEntry(key: string, def: string): Record<string, SchemaEntry> {
  return {
    [`auth.${key}.server`]: { type: "string", default: def, nonEmpty: true, description: "Server address, host:port." },
  };
}

export function poolEntry(key: string): Record<string, SchemaEntry> {
  return {
    [`auth.${key}.pool`]: { type: "integer", default: "8", min: 1, description: "Connections in the pool." },
  };
}

export function timeoutEntries(key: string): Record<string, SchemaEntry> {
  return {
    [`auth.${key}.query_timeout`]: {
      type: "duration",
      default: "5s",
      min: 1,
      description: "Time limit of one query, the wait for a connection included.",
    },
    [`auth.${key}.on_error`]: {
      type: "enum",
      values: ["ignore", "deny"],
      default: "ignore",
      description: "The answer while the back end is unreachable, failing or too slow: ignore (next) or deny.",
    },
  };
}

export function hashEntry(fullKey: string, def: string): Record<string, SchemaEntry> {
  return {
    [fullKey]: {
      type: "string",
      default: def,
      nonEmpty: true,
      description:
        "Password hash: plain, md5, sha, sha256, sha512, bcrypt, salt,<h>, <h>,salt, salt,bcrypt, pbkdf2,<mac>,<iter>,<dklen>.",
    },
  };
}

/** Where a key was set (file:line), or the file / plugin name for a default. */
export function originOf(conf: PluginConf, key: string, plugin: string): string {
  return conf.values.get(key)?.origin ?? conf.file ?? plugin;
}

/** Reads a `password_hash` key; a problem goes to `issues` (file:line). */
/**
 * The settings every family shares: the `query_timeout` and `on_error` of timeoutEntries(), and
 * the password hash at `hashKey` (a bad one is an issue).
 */
export function readCommon(
  conf: PluginConf,
  key: string,
  hashKey: string,
  plugin: string,
  issues: string[],
): Omit<DbCommonSettings, "target"> {
  return {
    timeout: conf.get(`auth.${key}.query_timeout`) as number,
    onError: conf.get(`auth.${key}.on_error`) as OnError,
    hash: readHash(conf, hashKey, plugin, issues),
  };
}

export function readHash(conf: PluginConf, key: string, plugin: string, issues: string[]): HashSpec {
  try {
    return parseHashSpec(conf.get(key) as string);
  } catch (err) {
    issues.push(`${originOf(conf, key, plugin)}: ${key}: ${(err as Error).message}`);
    return { kind: "digest", digest: "plain", salt: "none" };
  }
}

export interface HostPort {
  host: string;
  port: number;
}

/** `host:port[,host:port...]` (`[v6]:port` too); the default port when none is given. */
export function parseServers(text: string, defaultPort: number): HostPort[] {
  const out: HostPort[] = [];
  for (const part of text.split(",")) {
    const s = part.trim();
    if (s === "") continue;
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(s) ?? /^([^:]+)(?::(\d+))?$/.exec(s);
    if (m === null) throw new Error(`invalid server "${s}" (expected host:port)`);
    const port = m[2] === undefined ? defaultPort : Number(m[2]);
    if (!Number.isInteger(port) || port < 1 || port > 65535) throw new Error(`invalid port in "${s}"`);
    out.push({ host: m[1], port });
  }
  if (out.length === 0) throw new Error("no server given");
  return out;
}

/** Reads a server list key; a problem goes to `issues`. */
export function readServers(
  conf: PluginConf,
  key: string,
  defaultPort: number,
  plugin: string,
  issues: string[],
): HostPort[] {
  try {
    return parseServers(conf.get(key) as string, defaultPort);
  } catch (err) {
    issues.push(`${originOf(conf, key, plugin)}: ${key}: ${(err as Error).message}`);
    return [{ host: "127.0.0.1", port: defaultPort }];
  }
}

/** Reads an optional query (empty = none) with `parse`; a problem goes to `issues`. */
export function readQuery<T>(
  conf: PluginConf,
  key: string,
  plugin: string,
  issues: string[],
  parse: (text: string) => T,
): T | undefined {
  const text = (conf.get(key) as string | undefined)?.trim();
  if (text === undefined || text === "") return undefined;
  try {
    return parse(text);
  } catch (err) {
    issues.push(`${originOf(conf, key, plugin)}: ${key}: ${(err as Error).message}`);
    return undefined;
  }
}

/** Throws the issues found (in file line order) as one ConfigError. */
export function throwIssues(issues: string[]): void {
  if (issues.length === 0) return;
  const line = (i: string) => Number(/^[^ ]*:([0-9]+):/.exec(i)?.[1] ?? 0);
  throw new ConfigError([...issues].sort((a, b) => line(a) - line(b)));
}

// ---- the provider ------------------------------------------------------------------------------------

class Timeout extends Error {
  override name = "TimeoutError";
}

/** `p`, or a rejection after `ms`. */
export function withDeadline<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Timeout(`no answer within ${ms} ms`)), ms);
  });
  p.catch(() => undefined); // a late failure after the deadline is not unhandled
  return Promise.race([p, late]).finally(() => clearTimeout(timer));
}

const FAILED = Symbol("failed");

export class DbProvider<S extends DbCommonSettings> implements Plugin, AuthProvider, AclSource {
  readonly version = "0.1.0";
  readonly type = "auth" as const;
  readonly name: string;
  readonly description: string;
  readonly alarm: string;
  private readonly health: BackendHealth;
  private settings: S | undefined;
  private backend: DbBackend | undefined;

  constructor(
    private readonly family: DbFamily<S>,
    private readonly deps: BackendProviderDeps,
  ) {
    this.name = family.plugin;
    this.description = family.description;
    this.alarm = `auth_${family.key}_down`;
    this.health = new BackendHealth(deps, family.plugin, this.alarm, family.label);
  }

  load(): void {
    const s = this.family.loadSettings(this.deps.etcDir);
    const backend = this.family.open(s, this.deps.logger);
    this.settings = s;
    this.backend = backend;
    this.deps.chain.add(this);
    if (backend.aclRules !== undefined) this.deps.acl.addSource(this);
    this.deps.logger.info(
      {
        plugin: this.name,
        server: s.target,
        super: backend.isSuperuser !== undefined,
        acl: backend.aclRules !== undefined,
      },
      `${this.family.label} authentication started`,
    );
  }

  async unload(): Promise<void> {
    this.deps.chain.remove(this.name);
    this.deps.acl.removeSource(this.name);
    this.health.clear();
    const b = this.backend;
    const timeout = this.settings?.timeout ?? 5000;
    this.backend = undefined;
    this.settings = undefined;
    if (b !== undefined) {
      await withDeadline(b.close(), timeout).catch((err: unknown) =>
        this.deps.logger.warn({ plugin: this.name, reason: describe(err) }, "closing the pool failed"),
      );
    }
  }

  async authenticate(client: ClientInfo, creds: Credentials): Promise<AuthAnswer> {
    const s = this.settings;
    const b = this.backend;
    if (s === undefined || b === undefined) return undefined;
    const user = await this.call(s, () => b.findUser(client));
    if (user === FAILED) return s.onError === "deny" ? { allow: false, rc: RC.NOT_AUTHORIZED } : undefined;
    if (user === undefined) return undefined;
    if (creds.password === undefined || user.password === undefined) return BAD_PASSWORD;
    if (!(await checkPassword(s.hash, user.password, creds.password, user.salt))) return BAD_PASSWORD;
    if (user.superuser === true) return { allow: true, superuser: true };
    const isSuper = b.isSuperuser;
    if (isSuper === undefined) return ALLOW;
    const sup = await this.call(s, () => isSuper(client));
    return sup === true ? { allow: true, superuser: true } : ALLOW;
  }

  async check(client: ClientInfo, action: AclAction, topic: string): Promise<AclDecision> {
    const s = this.settings;
    const aclRules = this.backend?.aclRules;
    if (s === undefined || aclRules === undefined) return undefined;
    const r = await this.call(s, () => aclRules(client));
    if (r === FAILED) {
      // Thrown, a failure is denied without being cached; ignored, the next source decides.
      if (s.onError === "deny") throw new Error(`${this.name}: ${this.family.label} unavailable`);
      return undefined;
    }
    if (r.bad.length > 0) this.deps.logger.warn({ plugin: this.name, bad: r.bad }, "ACL entries skipped");
    if (r.rules.length === 0) return undefined;
    const m = firstMatch(compileRules(r.rules), client, action, topic);
    if (m !== undefined) return m.rule.permission;
    return this.family.aclStyle === "allow_list" ? "deny" : undefined;
  }

  /** One back-end call within the deadline; FAILED (logged, alarm raised) when it fails. */
  private async call<T>(s: S, f: () => Promise<T>): Promise<T | typeof FAILED> {
    try {
      const v = await withDeadline(f(), s.timeout);
      this.health.up({ server: s.target });
      return v;
    } catch (err) {
      const reason = describe(err);
      this.health.down(
        `${this.family.label} ${s.target} is down`,
        { server: s.target, reason },
        { server: s.target, reason, on_error: s.onError },
      );
      return FAILED;
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof AggregateError && err.errors.length > 0) return describe(err.errors[0]);
  if (err instanceof Error) {
    const code = (err as { code?: unknown }).code;
    return typeof code === "string" && !err.message.includes(code) ? `${code}: ${err.message}` : err.message;
  }
  return String(err);
}
