// svc_auth_http: authentication (and optionally superuser and ACL) by an HTTP service (spec section
// 5, emqx-facts §5 auth_http). Configured in `<plugins.etc_dir>/svc_auth_http.conf`.
//
// - auth request: 200 allows (a body of `ignore` passes the client to the next provider), 403
//   refuses with 0x87 not authorized (3.1.1: 5), any other status with 0x86 bad user name or
//   password (3.1.1: 4). A client the service allowed is then a superuser when the optional super
//   request answers 200 (anything else, an error included: not a superuser).
// - acl request (optional): joins the ACL chain; 200 allows (`ignore`: the next ACL source, then the
//   rule file decides), any other status denies. Answers are kept by the client's ACL cache.
// - Every request runs with Node's fetch, bounded by `auth.http.timeout` (the wait for one of the
//   `auth.http.pool_size` slots included). When the service cannot be reached or does not answer
//   in time, the failure is logged, the alarm `auth_http_down` is raised and the answer is
//   `auth.http.on_error`: `ignore` (the next provider / ACL source decides; the default) or `deny`
//   (0x87 at CONNECT; a denied publish or subscribe, not cached). The first answer received again
//   clears the alarm.
// - A 200's JSON body setting `mountpoint` is not applied (mountpoints come from the listener).

import type { Credentials } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { ConfigError } from "../config/config-error.ts";
import type { SchemaEntry } from "../config/schema-types.ts";
import { RC } from "../mqtt/reason-codes.ts";
import { loadPluginConf, type PluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import type { Plugin } from "../plugins/registry.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { AclDecision, AclSource } from "./acl.ts";
import { BackendHealth } from "./backend-health.ts";
import { ALLOW, type AuthAnswer, type AuthChain, type AuthProvider } from "./chain.ts";
import { svcConfHint } from "./credential-provider.ts";
import {
  buildRequest,
  type HttpAnswer,
  type HttpRequestSpec,
  type PlaceholderVars,
  parseParams,
  RequestPool,
} from "./http-request.ts";

export const HTTP_PLUGIN = "svc_auth_http";
export const HTTP_ALARM = "auth_http_down";

/** What a provider needs to raise and clear its back end's alarm (sys/alarms.ts). */
export interface AlarmSink {
  activate(name: string, desc: string, details?: Record<string, unknown>): boolean;
  deactivate(name: string): boolean;
}

/** The ACL chain (auth/acl.ts) as the providers use it. */
export interface AclSources {
  addSource(s: AclSource): void;
  removeSource(name: string): void;
}

export interface BackendProviderDeps {
  chain: AuthChain;
  acl: AclSources;
  logger: Logger;
  /** `plugins.etc_dir`: where `<plugin>.conf` is read from. */
  etcDir: string;
  /** The node's alarms, once $SYS is up (undefined before). */
  alarms: () => AlarmSink | undefined;
}

const CONTENT_TYPES = ["application/x-www-form-urlencoded", "application/json"] as const;

function reqEntries(req: string, url: string | undefined, params: string): Record<string, SchemaEntry> {
  return {
    [`auth.http.${req}.url`]: {
      type: "string",
      ...(url === undefined ? {} : { default: url }),
      description: `URL of the ${req} request${url === undefined ? " (unset: no such request)" : ""}.`,
    },
    [`auth.http.${req}.method`]: {
      type: "enum",
      values: ["get", "post"],
      default: "post",
      description: `HTTP method of the ${req} request.`,
    },
    [`auth.http.${req}.headers.content_type`]: {
      type: "enum",
      values: CONTENT_TYPES,
      default: "application/x-www-form-urlencoded",
      description: `Body format of a POST ${req} request.`,
    },
    [`auth.http.${req}.params`]: {
      type: "string",
      default: params,
      description: `Parameters of the ${req} request: name=value pairs, comma separated, with placeholders.`,
    },
  };
}

export const HTTP_CONF_SCHEMA: PluginConfSchema = {
  ...reqEntries("auth_req", "http://127.0.0.1:80/mqtt/auth", "clientid=%c,username=%u,password=%P"),
  ...reqEntries("super_req", undefined, "clientid=%c,username=%u"),
  ...reqEntries("acl_req", undefined, "access=%A,username=%u,clientid=%c,ipaddr=%a,topic=%t,mountpoint=%m"),
  "auth.http.timeout": {
    type: "duration",
    default: "5s",
    min: 1,
    description: "Time limit of one request, connection and wait for a pool slot included.",
  },
  "auth.http.connect_timeout": {
    type: "duration",
    default: "5s",
    description: "Accepted for compatibility: the connection is bounded by auth.http.timeout.",
  },
  "auth.http.pool_size": {
    type: "integer",
    default: "32",
    min: 1,
    description: "Requests in flight at most; the others wait (within the timeout).",
  },
  "auth.http.on_error": {
    type: "enum",
    values: ["ignore", "deny"],
    default: "ignore",
    description: "The answer while the service is unreachable or times out: ignore (next provider) or deny.",
  },
};

export interface HttpProviderSettings {
  auth: HttpRequestSpec;
  super: HttpRequestSpec | undefined;
  acl: HttpRequestSpec | undefined;
  timeout: number;
  poolSize: number;
  onError: "ignore" | "deny";
}

function requestSpec(conf: PluginConf, req: string, issues: string[]): HttpRequestSpec | undefined {
  const url = conf.get(`auth.http.${req}.url`) as string | undefined;
  if (url === undefined || url === "") return undefined;
  const origin = (k: string) => conf.values.get(`auth.http.${req}.${k}`)?.origin ?? conf.file ?? HTTP_PLUGIN;
  try {
    const u = new URL(url);
    if (u.protocol !== "http:" && u.protocol !== "https:") throw new Error("not http(s)");
  } catch {
    issues.push(`${origin("url")}: auth.http.${req}.url: invalid URL "${url}"`);
  }
  let params: [string, string][] = [];
  try {
    params = parseParams(conf.get(`auth.http.${req}.params`) as string);
  } catch (err) {
    issues.push(`${origin("params")}: auth.http.${req}.params: ${(err as Error).message}`);
  }
  return {
    url,
    method: conf.get(`auth.http.${req}.method`) as HttpRequestSpec["method"],
    contentType: conf.get(`auth.http.${req}.headers.content_type`) as HttpRequestSpec["contentType"],
    params,
  };
}

/** Reads `<dir>/svc_auth_http.conf`; throws ConfigError naming file:line. */
export function loadHttpSettings(dir: string): HttpProviderSettings {
  const conf = loadPluginConf(dir, HTTP_PLUGIN, HTTP_CONF_SCHEMA, { hint: svcConfHint });
  const issues: string[] = [];
  const auth = requestSpec(conf, "auth_req", issues);
  const superReq = requestSpec(conf, "super_req", issues);
  const acl = requestSpec(conf, "acl_req", issues);
  if (auth === undefined) issues.push(`${conf.file ?? HTTP_PLUGIN}: auth.http.auth_req.url must be set`);
  if (issues.length > 0 || auth === undefined) throw new ConfigError(issues);
  return {
    auth,
    super: superReq,
    acl,
    timeout: conf.get("auth.http.timeout") as number,
    poolSize: conf.get("auth.http.pool_size") as number,
    onError: conf.get("auth.http.on_error") as "ignore" | "deny",
  };
}

/** The service's answer, or undefined when it could not be reached in time. */
type Outcome = HttpAnswer | undefined;

export class HttpProvider implements Plugin, AuthProvider, AclSource {
  readonly name = HTTP_PLUGIN;
  readonly version = "0.1.0";
  readonly type = "auth" as const;
  readonly description = "Authentication and ACL by an HTTP service";
  private settings: HttpProviderSettings | undefined;
  private pool: RequestPool | undefined;

  private readonly health: BackendHealth;

  constructor(private readonly deps: BackendProviderDeps) {
    this.health = new BackendHealth(deps, HTTP_PLUGIN, HTTP_ALARM, "HTTP authentication service");
  }

  load(): void {
    const s = loadHttpSettings(this.deps.etcDir);
    this.settings = s;
    this.pool = new RequestPool(s.poolSize, s.timeout);
    this.deps.chain.add(this);
    if (s.acl !== undefined) this.deps.acl.addSource(this);
    this.deps.logger.info(
      { plugin: this.name, url: s.auth.url, super: s.super !== undefined, acl: s.acl !== undefined },
      "HTTP authentication started",
    );
  }

  unload(): void {
    this.deps.chain.remove(this.name);
    this.deps.acl.removeSource(this.name);
    this.health.clear();
    this.settings = undefined;
    this.pool = undefined;
  }

  async authenticate(client: ClientInfo, creds: Credentials): Promise<AuthAnswer> {
    const s = this.settings;
    if (s === undefined) return undefined;
    const vars: PlaceholderVars = { client, password: creds.password };
    const a = await this.call(s.auth, vars);
    if (a === undefined) return s.onError === "deny" ? { allow: false, rc: RC.NOT_AUTHORIZED } : undefined;
    if (a.status !== 200) {
      return { allow: false, rc: a.status === 403 ? RC.NOT_AUTHORIZED : RC.BAD_USER_NAME_OR_PASSWORD };
    }
    if (a.body === "ignore") return undefined;
    if (s.super === undefined) return ALLOW;
    const sup = await this.call(s.super, vars);
    return sup?.status === 200 && sup.body !== "ignore" ? { allow: true, superuser: true } : ALLOW;
  }

  async check(client: ClientInfo, action: "publish" | "subscribe", topic: string): Promise<AclDecision> {
    const s = this.settings;
    if (s?.acl === undefined) return undefined;
    const a = await this.call(s.acl, { client, access: action, topic });
    if (a === undefined) {
      // Thrown, a failure is denied without being cached; ignored, the next source decides.
      if (s.onError === "deny") throw new Error(`${this.name}: ACL service unavailable`);
      return undefined;
    }
    if (a.status !== 200) return "deny";
    return a.body === "ignore" ? undefined : "allow";
  }

  /** One request; undefined (logged, alarm raised) when the service is unreachable or too slow. */
  private async call(spec: HttpRequestSpec, vars: PlaceholderVars): Promise<Outcome> {
    const pool = this.pool;
    if (pool === undefined) return undefined;
    const { url, init } = buildRequest(spec, vars);
    try {
      const a = await pool.request(url, init);
      this.health.up({ url: spec.url });
      return a;
    } catch (err) {
      const reason = describe(err);
      this.health.down(
        `HTTP authentication service ${spec.url} is down`,
        { url: spec.url, reason },
        { url: spec.url, reason, on_error: this.settings?.onError },
      );
      return undefined;
    }
  }
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    if (err.name === "TimeoutError") return "timed out";
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return cause?.code ?? cause?.message ?? err.message;
  }
  return String(err);
}

export function httpProvider(deps: BackendProviderDeps): HttpProvider {
  return new HttpProvider(deps);
}
