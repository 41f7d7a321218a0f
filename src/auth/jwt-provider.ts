// svc_auth_jwt: authentication by a JSON Web Token the client presents as its password (or user
// name) (spec section 5, emqx-facts §5 auth_jwt), verified with node:crypto only. Configured in
// `<plugins.etc_dir>/svc_auth_jwt.conf`:
//
// - keys: `auth.jwt.secret` (HS256/384/512), `auth.jwt.pubkey` (a PEM file: RSA for RS*/PS*, EC for
//   ES*), `auth.jwt.jwks` (a JWKS URL, fetched at load and every `auth.jwt.jwks.refresh_interval`;
//   a token's `kid` picks the key, a token without one tries every key of its kind). Any
//   combination; a token is checked with the keys that fit its `alg` (never an HMAC with a public
//   key, `none` never).
// - `auth.jwt.from = password|username`: where the token is. A client without one, or whose value
//   is not a JWT, or whose token no configured key fits, is ignored (next provider).
// - A token with a bad signature, past its `exp`, before its `nbf`, or failing a claim check is
//   refused with 0x87 not authorized (3.1.1: 5), as in the family.
// - `auth.jwt.verify_claims = on` with `auth.jwt.verify_claims.<claim> = <value>`: the claim must
//   equal the value, `%u` / `%c` standing for the user name / client id.
// - `auth.jwt.superuser_claim_name` (unset: none): a claim that, when `true`, makes a superuser.
// - `auth.jwt.acl_claim_name` (default `acl`): `{"acl": {"pub": [...], "sub": [...], "all": [...]}}`
//   joins the ACL chain for the client: a publish matching `pub` or `all`, a subscription matching
//   `sub` or `all` (filters, `%u`/`%c` whole levels) is allowed, anything else denied; once the
//   token's `exp` has passed everything is denied. A token without the claim leaves the ACL to the
//   next source and the rule file.

import {
  createHmac,
  createPublicKey,
  constants as cryptoConstants,
  type KeyObject,
  timingSafeEqual,
  verify as verifySignature,
} from "node:crypto";
import { readFileSync } from "node:fs";
import type { AclAction, Credentials } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { ConfigError } from "../config/config-error.ts";
import { RC } from "../mqtt/reason-codes.ts";
import { matchTopic } from "../mqtt/topic.ts";
import { loadPluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import type { Plugin } from "../plugins/registry.ts";
import { type AclDecision, type AclSource, feedVars } from "./acl.ts";
import { ALLOW, type AuthAnswer, type AuthProvider } from "./chain.ts";
import { svcConfHint } from "./credential-provider.ts";
import type { BackendProviderDeps } from "./http-provider.ts";

export const JWT_PLUGIN = "svc_auth_jwt";
export const JWKS_ALARM = "auth_jwt_jwks_down";

export const JWT_CONF_SCHEMA: PluginConfSchema = {
  "auth.jwt.secret": { type: "string", secret: true, description: "HMAC secret of HS256/384/512 tokens." },
  "auth.jwt.pubkey": { type: "file", description: "PEM public key (RSA or EC) of RS*, PS* and ES* tokens." },
  "auth.jwt.jwks": { type: "string", description: "URL of a JSON Web Key Set." },
  "auth.jwt.jwks.refresh_interval": {
    type: "duration",
    default: "5m",
    min: 1000,
    description: "How often the JWKS is fetched again.",
  },
  "auth.jwt.jwks.timeout": {
    type: "duration",
    default: "5s",
    min: 1,
    description: "Time limit of fetching the JWKS.",
  },
  "auth.jwt.from": {
    type: "enum",
    values: ["password", "username"],
    default: "password",
    description: "Where the client puts its token.",
  },
  "auth.jwt.verify_claims": { type: "boolean", default: "false", description: "Whether claims are checked." },
  "auth.jwt.verify_claims.$name": {
    type: "string",
    description: "The value a claim must have (%u user name, %c client id).",
  },
  "auth.jwt.superuser_claim_name": {
    type: "string",
    description: "A claim that, when true, makes the client a superuser (unset: none).",
  },
  "auth.jwt.acl_claim_name": { type: "string", default: "acl", description: "The claim carrying ACL lists." },
};

export interface JwtSettings {
  secret: Buffer | undefined;
  pubkey: KeyObject | undefined;
  jwks: string | undefined;
  refreshInterval: number;
  jwksTimeout: number;
  from: "password" | "username";
  /** Claims to check (claim name -> value with %u / %c). */
  claims: [string, string][];
  superuserClaim: string | undefined;
  aclClaim: string;
}

/** Reads `<dir>/svc_auth_jwt.conf`; throws ConfigError naming file:line. */
export function loadJwtSettings(dir: string): JwtSettings {
  const conf = loadPluginConf(dir, JWT_PLUGIN, JWT_CONF_SCHEMA, { hint: svcConfHint });
  const issues: string[] = [];
  const at = (k: string) => conf.values.get(k)?.origin ?? conf.file ?? JWT_PLUGIN;
  const secret = conf.get("auth.jwt.secret") as string | undefined;
  const pubkeyPath = conf.get("auth.jwt.pubkey") as string | undefined;
  const jwks = conf.get("auth.jwt.jwks") as string | undefined;
  let pubkey: KeyObject | undefined;
  if (pubkeyPath !== undefined) {
    try {
      pubkey = createPublicKey(readFileSync(pubkeyPath));
      if (pubkey.asymmetricKeyType !== "rsa" && pubkey.asymmetricKeyType !== "ec") {
        issues.push(`${at("auth.jwt.pubkey")}: auth.jwt.pubkey: ${pubkey.asymmetricKeyType} keys are not supported`);
      }
    } catch (err) {
      issues.push(`${at("auth.jwt.pubkey")}: auth.jwt.pubkey: not a PEM public key: ${(err as Error).message}`);
    }
  }
  if (jwks !== undefined) {
    try {
      new URL(jwks);
    } catch {
      issues.push(`${at("auth.jwt.jwks")}: auth.jwt.jwks: invalid URL "${jwks}"`);
    }
  }
  if (!secret && pubkeyPath === undefined && jwks === undefined) {
    issues.push(`${conf.file ?? JWT_PLUGIN}: one of auth.jwt.secret, auth.jwt.pubkey or auth.jwt.jwks must be set`);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  const claims: [string, string][] = [];
  if (conf.get("auth.jwt.verify_claims") === true) {
    for (const v of conf.values.values()) {
      if (v.key.startsWith("auth.jwt.verify_claims.")) claims.push([v.key.slice(23), v.value as string]);
    }
  }
  return {
    secret: secret ? Buffer.from(secret, "utf8") : undefined,
    pubkey,
    jwks,
    refreshInterval: conf.get("auth.jwt.jwks.refresh_interval") as number,
    jwksTimeout: conf.get("auth.jwt.jwks.timeout") as number,
    from: conf.get("auth.jwt.from") as "password" | "username",
    claims,
    superuserClaim: conf.get("auth.jwt.superuser_claim_name") as string | undefined,
    aclClaim: conf.get("auth.jwt.acl_claim_name") as string,
  };
}

// ---- verification ------------------------------------------------------------------------------

export type JwtClaims = Record<string, unknown>;

export type JwtVerdict =
  | { ok: true; claims: JwtClaims }
  /** `not_token`: not a JWT; `no_key`: no configured key fits (both: ignore). */
  | { ok: false; reason: "not_token" | "no_key" | "bad_signature" | "expired" | "not_yet_valid" };

interface Alg {
  kind: "hmac" | "rsa" | "pss" | "ec";
  hash: "sha256" | "sha384" | "sha512";
}

const ALGS: Record<string, Alg> = {
  HS256: { kind: "hmac", hash: "sha256" },
  HS384: { kind: "hmac", hash: "sha384" },
  HS512: { kind: "hmac", hash: "sha512" },
  RS256: { kind: "rsa", hash: "sha256" },
  RS384: { kind: "rsa", hash: "sha384" },
  RS512: { kind: "rsa", hash: "sha512" },
  PS256: { kind: "pss", hash: "sha256" },
  PS384: { kind: "pss", hash: "sha384" },
  PS512: { kind: "pss", hash: "sha512" },
  ES256: { kind: "ec", hash: "sha256" },
  ES384: { kind: "ec", hash: "sha384" },
  ES512: { kind: "ec", hash: "sha512" },
};

const B64URL = /^[A-Za-z0-9_-]*$/;

function decodeJsonPart(part: string): Record<string, unknown> | undefined {
  try {
    const v: unknown = JSON.parse(Buffer.from(part, "base64url").toString("utf8"));
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The keys a verifier may use. */
export interface JwtKeys {
  secret: Buffer | undefined;
  pubkey: KeyObject | undefined;
  /** JWKS keys by kid ("" for keys without one). */
  jwks: ReadonlyMap<string, KeyObject[]>;
}

function keyFits(alg: Alg, k: KeyObject): boolean {
  return alg.kind === "ec" ? k.asymmetricKeyType === "ec" : k.asymmetricKeyType === "rsa";
}

function verifyWith(alg: Alg, key: KeyObject, data: Buffer, sig: Buffer): boolean {
  try {
    if (alg.kind === "ec") return verifySignature(alg.hash, data, { key, dsaEncoding: "ieee-p1363" }, sig);
    if (alg.kind === "pss") {
      const saltLength = { sha256: 32, sha384: 48, sha512: 64 }[alg.hash];
      return verifySignature(alg.hash, data, { key, padding: cryptoConstants.RSA_PKCS1_PSS_PADDING, saltLength }, sig);
    }
    return verifySignature(alg.hash, data, key, sig);
  } catch {
    return false;
  }
}

/** Verifies `token`'s signature with the keys that fit its alg, then `exp` and `nbf`. */
export function verifyJwt(token: string, keys: JwtKeys, now = Date.now()): JwtVerdict {
  const parts = token.split(".");
  if (parts.length !== 3 || !parts.every((p) => B64URL.test(p))) return { ok: false, reason: "not_token" };
  const header = decodeJsonPart(parts[0]);
  const claims = decodeJsonPart(parts[1]);
  if (header === undefined || claims === undefined) return { ok: false, reason: "not_token" };
  const alg = typeof header.alg === "string" ? ALGS[header.alg] : undefined;
  if (alg === undefined) return { ok: false, reason: "no_key" };
  const data = Buffer.from(`${parts[0]}.${parts[1]}`);
  const sig = Buffer.from(parts[2], "base64url");
  let candidates = 0;
  let valid = false;
  if (alg.kind === "hmac") {
    if (keys.secret !== undefined) {
      candidates++;
      const mac = createHmac(alg.hash, keys.secret).update(data).digest();
      valid = mac.length === sig.length && timingSafeEqual(mac, sig);
    }
  } else {
    const list: KeyObject[] = [];
    if (keys.pubkey !== undefined) list.push(keys.pubkey);
    const kid = typeof header.kid === "string" ? header.kid : undefined;
    if (kid !== undefined) list.push(...(keys.jwks.get(kid) ?? []));
    else for (const ks of keys.jwks.values()) list.push(...ks);
    for (const k of list) {
      if (!keyFits(alg, k)) continue;
      candidates++;
      if (verifyWith(alg, k, data, sig)) {
        valid = true;
        break;
      }
    }
  }
  if (candidates === 0) return { ok: false, reason: "no_key" };
  if (!valid) return { ok: false, reason: "bad_signature" };
  const sec = now / 1000;
  if (typeof claims.exp === "number" && sec >= claims.exp) return { ok: false, reason: "expired" };
  if (typeof claims.nbf === "number" && sec < claims.nbf) return { ok: false, reason: "not_yet_valid" };
  return { ok: true, claims };
}

/** The keys of a JWKS document by kid ("" without one); keys that are not RSA/EC are skipped. */
export function parseJwks(doc: unknown): Map<string, KeyObject[]> {
  const out = new Map<string, KeyObject[]>();
  const keys = (doc as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new Error("not a JWKS document (no keys array)");
  for (const jwk of keys) {
    if (typeof jwk !== "object" || jwk === null) continue;
    const j = jwk as { kid?: unknown; kty?: unknown; use?: unknown };
    if (j.kty !== "RSA" && j.kty !== "EC") continue;
    if (j.use !== undefined && j.use !== "sig") continue;
    let key: KeyObject;
    try {
      key = createPublicKey({ key: jwk as import("node:crypto").JsonWebKey, format: "jwk" });
    } catch {
      continue;
    }
    const kid = typeof j.kid === "string" ? j.kid : "";
    const list = out.get(kid) ?? [];
    list.push(key);
    out.set(kid, list);
  }
  return out;
}

// ---- ACL claims ----------------------------------------------------------------------------------

export interface AclClaim {
  pub: string[];
  sub: string[];
  all: string[];
}

function stringList(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : [];
}

/** The ACL claim's lists, or undefined when the claim is absent or not an object. */
export function aclClaimOf(claims: JwtClaims, name: string): AclClaim | undefined {
  const v = claims[name];
  if (typeof v !== "object" || v === null || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  return { pub: stringList(o.pub), sub: stringList(o.sub), all: stringList(o.all) };
}

function claimMatches(filters: string[], client: ClientInfo, topic: string): boolean {
  return filters.some((f) => {
    const filled = feedVars(f, client);
    return filled !== undefined && matchTopic(filled, topic);
  });
}

// ---- the plugin ----------------------------------------------------------------------------------

interface ClientGrant {
  acl: AclClaim;
  /** ms since the epoch; undefined = no exp. */
  exp: number | undefined;
}

export class JwtProvider implements Plugin, AuthProvider, AclSource {
  readonly name = JWT_PLUGIN;
  readonly version = "0.1.0";
  readonly type = "auth" as const;
  readonly description = "Authentication and ACL by JSON Web Tokens";
  private settings: JwtSettings | undefined;
  private jwks: Map<string, KeyObject[]> = new Map();
  private timer: NodeJS.Timeout | undefined;
  private fetching: AbortController | undefined;
  /** ACL claims of the clients authenticated by a token (per connection). */
  private grants = new WeakMap<ClientInfo, ClientGrant>();

  constructor(private readonly deps: BackendProviderDeps) {}

  async load(): Promise<void> {
    const s = loadJwtSettings(this.deps.etcDir);
    this.settings = s;
    this.grants = new WeakMap();
    this.jwks = new Map();
    if (s.jwks !== undefined) {
      await this.refresh();
      this.timer = setInterval(() => void this.refresh(), s.refreshInterval);
      this.timer.unref();
    }
    this.deps.chain.add(this);
    this.deps.acl.addSource(this);
  }

  unload(): void {
    this.deps.chain.remove(this.name);
    this.deps.acl.removeSource(this.name);
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.fetching?.abort();
    this.fetching = undefined;
    this.deps.alarms()?.deactivate(JWKS_ALARM);
    this.settings = undefined;
  }

  /** Fetches the JWKS again (kept as it was when that fails: logged, alarm raised). */
  async refresh(): Promise<void> {
    const url = this.settings?.jwks;
    if (url === undefined || this.settings === undefined) return;
    const ctl = new AbortController();
    this.fetching = ctl;
    try {
      const signal = AbortSignal.any([ctl.signal, AbortSignal.timeout(this.settings.jwksTimeout)]);
      const res = await fetch(url, { signal });
      if (res.status !== 200) throw new Error(`HTTP status ${res.status}`);
      const keys = parseJwks(await res.json());
      if (this.fetching !== ctl) return;
      this.jwks = keys;
      if (this.deps.alarms()?.deactivate(JWKS_ALARM))
        this.deps.logger.info({ plugin: this.name, url }, "JWKS fetched again");
      this.deps.logger.debug({ plugin: this.name, url, kids: [...keys.keys()] }, "JWKS loaded");
    } catch (err) {
      if (ctl.signal.aborted) return;
      const reason = err instanceof Error ? err.message : String(err);
      this.deps.alarms()?.activate(JWKS_ALARM, `JWKS ${url} cannot be fetched`, { url, reason });
      this.deps.logger.error({ plugin: this.name, url, reason }, "JWKS cannot be fetched; keeping the keys held");
    } finally {
      if (this.fetching === ctl) this.fetching = undefined;
    }
  }

  authenticate(client: ClientInfo, creds: Credentials): AuthAnswer {
    const s = this.settings;
    if (s === undefined) return undefined;
    const token = s.from === "username" ? creds.username : creds.password?.toString("utf8");
    if (token === undefined || token === "") return undefined;
    const v = verifyJwt(token, { secret: s.secret, pubkey: s.pubkey, jwks: this.jwks });
    if (!v.ok) {
      if (v.reason === "not_token" || v.reason === "no_key") return undefined;
      this.deps.logger.debug({ plugin: this.name, clientid: client.clientId, reason: v.reason }, "token refused");
      return { allow: false, rc: RC.NOT_AUTHORIZED };
    }
    for (const [claim, want] of s.claims) {
      const expected = want.replace(/%[uc]/g, (m) => (m === "%u" ? (client.username ?? "") : client.clientId));
      const got = v.claims[claim];
      if ((typeof got !== "string" && typeof got !== "number") || String(got) !== expected) {
        this.deps.logger.debug({ plugin: this.name, clientid: client.clientId, claim }, "token claim check failed");
        return { allow: false, rc: RC.NOT_AUTHORIZED };
      }
    }
    const acl = aclClaimOf(v.claims, s.aclClaim);
    if (acl !== undefined) {
      const exp = typeof v.claims.exp === "number" ? v.claims.exp * 1000 : undefined;
      this.grants.set(client, { acl, exp });
    } else this.grants.delete(client);
    const su = s.superuserClaim !== undefined && v.claims[s.superuserClaim] === true;
    return su ? { allow: true, superuser: true } : ALLOW;
  }

  check(client: ClientInfo, action: AclAction, topic: string): AclDecision {
    const g = this.grants.get(client);
    if (g === undefined) return undefined;
    if (g.exp !== undefined && Date.now() >= g.exp) return "deny";
    const lists = action === "publish" ? [g.acl.pub, g.acl.all] : [g.acl.sub, g.acl.all];
    return lists.some((l) => claimMatches(l, client, topic)) ? "allow" : "deny";
  }
}

export function jwtProvider(deps: BackendProviderDeps): JwtProvider {
  return new JwtProvider(deps);
}
