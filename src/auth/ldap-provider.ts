// svc_auth_ldap: authentication and ACL by an LDAP directory (spec section 5; the family's
// emqx_auth_ldap). Configured in `<plugins.etc_dir>/svc_auth_ldap.conf` (ldap-settings.ts); the
// directory schema (mqttUser, mqttDevice, mqttSecurity, isEnabled, isSuperuser, topic lists) is
// shipped as etc/ldap/svc-mqtt.schema.
//
// - A CONNECT's user name is looked up under `device_dn` with the filter
//   `(&(objectClass=<match_objectclass>)(<username.attributetype>=<user name>))` (the user name
//   escaped per RFC 4515; no DN is built from client input). No entry: ignore (next provider).
//   More than one: refused (0x86). `isEnabled: FALSE`: refused with 0x87 not authorized.
// - The password is checked against the entry's password attribute (ldap-password.ts: plain,
//   {SHA}, {SSHA}, {MD5}, {SMD5}, {SHA256}...; 0x86 / 3.1.1: 4 when wrong; an entry without the
//   attribute is ignored), or with `bind_as_user = true` by binding as the entry's DN.
// - `<superuser.attributetype>: TRUE` (default isSuperuser) makes a superuser.
// - ACL source: a publish is allowed when its topic matches one of the entry's mqttPublishTopic or
//   mqttPubSubTopic filters, a subscription one of mqttSubscriptionTopic or mqttPubSubTopic;
//   anything else (no entry, no match, a user name starting with `$`) is left to the next source
//   and the rule file, as in the family.
// - The directory unreachable or not answering within `timeout`: logged, alarm `auth_ldap_down`,
//   answer per `on_error` (ignore: next provider / ACL source; deny: 0x87 at CONNECT, a denied
//   publish or subscribe, not cached). The next answer clears the alarm; the pool reconnects.

import type { AclAction, Credentials } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { RC } from "../mqtt/reason-codes.ts";
import { matchTopic } from "../mqtt/topic.ts";
import type { Plugin } from "../plugins/registry.ts";
import type { AclDecision, AclSource } from "./acl.ts";
import { BackendHealth } from "./backend-health.ts";
import { ALLOW, type AuthAnswer, type AuthProvider, BAD_PASSWORD } from "./chain.ts";
import type { BackendProviderDeps } from "./http-provider.ts";
import { checkLdapPassword, schemeOf } from "./ldap-password.ts";
import { LdapPool, LdapUnavailable } from "./ldap-pool.ts";
import { LDAP_PLUGIN, type LdapSettings, loadLdapSettings } from "./ldap-settings.ts";

export { LDAP_PLUGIN } from "./ldap-settings.ts";
export const LDAP_ALARM = "auth_ldap_down";

const PUB_ATTR = "mqttPublishTopic";
const SUB_ATTR = "mqttSubscriptionTopic";
const PUBSUB_ATTR = "mqttPubSubTopic";

type Entry = { dn: string; [attr: string]: Buffer | Buffer[] | string[] | string };

/** RFC 4515 escaping of a value in a filter. */
export function escapeFilterValue(v: string): string {
  return v.replace(/[\\*()\0]/g, (c) => `\\${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

/** The values of `attr` in `e` (attribute names compare case-insensitively). */
function values(e: Entry, attr: string): string[] {
  const want = attr.toLowerCase();
  for (const [k, v] of Object.entries(e)) {
    if (k === "dn" || k.toLowerCase() !== want) continue;
    const list = Array.isArray(v) ? v : [v];
    return list.map((x) => (Buffer.isBuffer(x) ? x.toString("utf8") : x));
  }
  return [];
}

export class LdapProvider implements Plugin, AuthProvider, AclSource {
  readonly name = LDAP_PLUGIN;
  readonly version = "0.1.0";
  readonly type = "auth" as const;
  readonly description = "Authentication and ACL by an LDAP directory";
  private settings: LdapSettings | undefined;
  private pool: LdapPool | undefined;

  private readonly health: BackendHealth;

  constructor(private readonly deps: BackendProviderDeps) {
    this.health = new BackendHealth(deps, LDAP_PLUGIN, LDAP_ALARM, "LDAP directory");
  }

  load(): void {
    const s = loadLdapSettings(this.deps.etcDir);
    this.settings = s;
    this.pool = new LdapPool({
      urls: s.urls,
      size: s.pool,
      timeout: s.timeout,
      bindDn: s.bindDn,
      bindPassword: s.bindPassword,
      tls: s.tls,
    });
    this.deps.chain.add(this);
    this.deps.acl.addSource(this);
    this.deps.logger.info(
      { plugin: this.name, servers: s.urls, device_dn: s.deviceDn, bind_as_user: s.bindAsUser },
      "LDAP authentication started",
    );
  }

  async unload(): Promise<void> {
    this.deps.chain.remove(this.name);
    this.deps.acl.removeSource(this.name);
    this.health.clear();
    const pool = this.pool;
    this.settings = undefined;
    this.pool = undefined;
    await pool?.close();
  }

  async authenticate(_client: ClientInfo, creds: Credentials): Promise<AuthAnswer> {
    const s = this.settings;
    const user = creds.username;
    if (s === undefined || user === undefined || user === "") return undefined;
    const found = await this.lookup(s, user, [s.passwordAttr, "isEnabled", s.superuserAttr]);
    if (found === "down") return s.onError === "deny" ? { allow: false, rc: RC.NOT_AUTHORIZED } : undefined;
    if (found.length === 0) return undefined;
    if (found.length > 1) {
      this.deps.logger.warn({ plugin: this.name, username: user, entries: found.length }, "user name is ambiguous");
      return BAD_PASSWORD;
    }
    const e = found[0];
    if (values(e, "isEnabled")[0]?.toUpperCase() === "FALSE") return { allow: false, rc: RC.NOT_AUTHORIZED };
    const superuser = values(e, s.superuserAttr)[0]?.toUpperCase() === "TRUE";
    const allowed: AuthAnswer = superuser ? { allow: true, superuser: true } : ALLOW;
    const password = creds.password ?? Buffer.alloc(0);
    if (s.bindAsUser) {
      const ok = await this.bindAs(e.dn, password.toString("utf8"));
      if (ok === "down") return s.onError === "deny" ? { allow: false, rc: RC.NOT_AUTHORIZED } : undefined;
      return ok ? allowed : BAD_PASSWORD;
    }
    const stored = values(e, s.passwordAttr);
    if (stored.length === 0) return undefined;
    let unsupported: string | undefined;
    for (const v of stored) {
      const r = checkLdapPassword(v, password);
      if (r === true) return allowed;
      if (r === "unsupported") unsupported = schemeOf(v);
    }
    if (unsupported !== undefined) {
      this.deps.logger.warn({ plugin: this.name, username: user, scheme: unsupported }, "unsupported password scheme");
    }
    return BAD_PASSWORD;
  }

  async check(client: ClientInfo, action: AclAction, topic: string): Promise<AclDecision> {
    const s = this.settings;
    const user = client.username;
    if (s === undefined || user === undefined || user === "" || user.startsWith("$")) return undefined;
    const attr = action === "publish" ? PUB_ATTR : SUB_ATTR;
    const found = await this.lookup(s, user, [attr, PUBSUB_ATTR]);
    if (found === "down") {
      // Thrown, a failure is denied without being cached; ignored, the next source decides.
      if (s.onError === "deny") throw new Error(`${this.name}: directory unavailable`);
      return undefined;
    }
    if (found.length !== 1) return undefined;
    const filters = [...values(found[0], attr), ...values(found[0], PUBSUB_ATTR)];
    return filters.some((f) => matchTopic(f, topic)) ? "allow" : undefined;
  }

  private async lookup(s: LdapSettings, user: string, attributes: string[]): Promise<Entry[] | "down"> {
    const filter = `(&(objectClass=${escapeFilterValue(s.objectClass)})(${s.usernameAttr}=${escapeFilterValue(user)}))`;
    return this.guard(() => (this.pool as LdapPool).search({ base: s.deviceDn, filter, attributes }));
  }

  private bindAs(dn: string, password: string): Promise<boolean | "down"> {
    return this.guard(() => (this.pool as LdapPool).bindAs(dn, password));
  }

  /** Runs one directory operation; "down" (logged, alarm raised) when the directory fails. */
  private async guard<T>(op: () => Promise<T>): Promise<T | "down"> {
    if (this.pool === undefined) return "down";
    try {
      const r = await op();
      this.health.up({});
      return r;
    } catch (err) {
      const url = err instanceof LdapUnavailable ? err.url : undefined;
      const reason = err instanceof Error ? err.message : String(err);
      const servers = this.settings?.urls;
      this.health.down(
        `LDAP directory ${url ?? servers?.join(",")} is down`,
        { servers, reason },
        { url, reason, on_error: this.settings?.onError },
      );
      return "down";
    }
  }
}

export function ldapProvider(deps: BackendProviderDeps): LdapProvider {
  return new LdapProvider(deps);
}
