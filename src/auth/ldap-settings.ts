// The configuration of svc_auth_ldap, `<plugins.etc_dir>/svc_auth_ldap.conf`: the family's keys
// (`auth.ldap.servers`, `port`, `pool`, `bind_dn`, `bind_password`, `timeout`, `device_dn`,
// `match_objectclass`, `username.attributetype`, `password.attributetype`, `bind_as_user`,
// `ssl.*`) plus `superuser.attributetype` (the later family's isSuperuser attribute) and
// `on_error` (what the provider answers while the directory is down).

import { readFileSync } from "node:fs";
import type { ConnectionOptions } from "node:tls";
import { ConfigError } from "../config/config-error.ts";
import { loadPluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import { svcConfHint } from "./credential-provider.ts";

export const LDAP_PLUGIN = "svc_auth_ldap";

export const LDAP_CONF_SCHEMA: PluginConfSchema = {
  "auth.ldap.servers": {
    type: "string",
    default: "127.0.0.1",
    nonEmpty: true,
    description: "LDAP server hosts, comma separated: tried in turn when one fails.",
  },
  "auth.ldap.port": { type: "integer", default: "389", min: 1, max: 65535, description: "LDAP server port." },
  "auth.ldap.pool": { type: "integer", default: "8", min: 1, description: "Connections to the directory." },
  "auth.ldap.bind_dn": {
    type: "string",
    default: "cn=root,dc=emqx,dc=io",
    description: "DN the connections bind with (the service account).",
  },
  "auth.ldap.bind_password": {
    type: "string",
    default: "public",
    secret: true,
    description: "Password of bind_dn.",
  },
  "auth.ldap.timeout": {
    type: "duration",
    default: "30s",
    min: 1,
    description: "Time limit of one lookup, connection and wait for a pool connection included.",
  },
  "auth.ldap.device_dn": {
    type: "string",
    default: "ou=device,dc=emqx,dc=io",
    nonEmpty: true,
    description: "Base DN under which user entries are searched.",
  },
  "auth.ldap.match_objectclass": {
    type: "string",
    default: "mqttUser",
    nonEmpty: true,
    description: "Object class a user entry must have.",
  },
  "auth.ldap.username.attributetype": {
    type: "string",
    default: "uid",
    description: "Attribute holding the user name.",
  },
  "auth.ldap.password.attributetype": {
    type: "string",
    default: "userPassword",
    description: "Attribute holding the password (plain or {SHA}, {SSHA}, {MD5}, {SMD5}, {SHA256}...).",
  },
  "auth.ldap.superuser.attributetype": {
    type: "string",
    default: "isSuperuser",
    description: "Boolean attribute that makes a superuser when TRUE.",
  },
  "auth.ldap.bind_as_user": {
    type: "boolean",
    default: "false",
    description: "Check the password by binding as the user's entry instead of reading the password attribute.",
  },
  "auth.ldap.on_error": {
    type: "enum",
    values: ["ignore", "deny"],
    default: "ignore",
    description: "The answer while the directory is unreachable or times out: ignore (next provider) or deny.",
  },
  "auth.ldap.ssl.enable": { type: "boolean", default: "false", description: "Connect with LDAPS (TLS)." },
  "auth.ldap.ssl.certfile": { type: "file", description: "Client certificate (PEM) for LDAPS." },
  "auth.ldap.ssl.keyfile": { type: "file", description: "Client private key (PEM) for LDAPS." },
  "auth.ldap.ssl.cacertfile": { type: "file", description: "CA certificates (PEM) the server's is checked with." },
  "auth.ldap.ssl.verify": {
    type: "enum",
    values: ["verify_none", "verify_peer"],
    default: "verify_none",
    description: "Whether the server's certificate is verified.",
  },
  "auth.ldap.ssl.server_name_indication": {
    type: "string",
    description: "Server name sent and checked in the TLS handshake (`disable`: none).",
  },
};

export interface LdapSettings {
  urls: string[];
  pool: number;
  bindDn: string;
  bindPassword: string;
  timeout: number;
  deviceDn: string;
  objectClass: string;
  usernameAttr: string;
  passwordAttr: string;
  superuserAttr: string;
  bindAsUser: boolean;
  onError: "ignore" | "deny";
  tls: ConnectionOptions | undefined;
}

const ATTR = /^(?:[A-Za-z][A-Za-z0-9-]*|[0-9]+(?:\.[0-9]+)+)$/;

/** Reads `<dir>/svc_auth_ldap.conf`; throws ConfigError naming file:line. */
export function loadLdapSettings(dir: string): LdapSettings {
  const conf = loadPluginConf(dir, LDAP_PLUGIN, LDAP_CONF_SCHEMA, { hint: svcConfHint });
  const issues: string[] = [];
  const at = (k: string) => conf.values.get(k)?.origin ?? conf.file ?? LDAP_PLUGIN;
  const str = (k: string) => conf.get(k) as string;
  for (const k of [
    "auth.ldap.username.attributetype",
    "auth.ldap.password.attributetype",
    "auth.ldap.superuser.attributetype",
    "auth.ldap.match_objectclass",
  ]) {
    if (!ATTR.test(str(k))) issues.push(`${at(k)}: ${k}: "${str(k)}" is not an attribute name`);
  }
  const ssl = conf.get("auth.ldap.ssl.enable") === true;
  const port = conf.get("auth.ldap.port") as number;
  const hosts = str("auth.ldap.servers")
    .split(",")
    .map((h) => h.trim())
    .filter((h) => h !== "");
  if (hosts.length === 0) issues.push(`${at("auth.ldap.servers")}: auth.ldap.servers: no host`);
  const urls = hosts.map((h) => `${ssl ? "ldaps" : "ldap"}://${h.includes(":") ? `[${h}]` : h}:${port}`);
  let tls: ConnectionOptions | undefined;
  if (ssl) {
    tls = { rejectUnauthorized: conf.get("auth.ldap.ssl.verify") === "verify_peer" };
    const read = (k: string): Buffer | undefined => {
      const p = conf.get(k) as string | undefined;
      if (p === undefined) return undefined;
      try {
        return readFileSync(p);
      } catch (err) {
        issues.push(`${at(k)}: ${k}: cannot read ${p}: ${(err as Error).message}`);
        return undefined;
      }
    };
    const cert = read("auth.ldap.ssl.certfile");
    const key = read("auth.ldap.ssl.keyfile");
    const ca = read("auth.ldap.ssl.cacertfile");
    if (cert !== undefined) tls.cert = cert;
    if (key !== undefined) tls.key = key;
    if (ca !== undefined) tls.ca = ca;
    const sni = conf.get("auth.ldap.ssl.server_name_indication") as string | undefined;
    if (sni !== undefined && sni !== "disable") tls.servername = sni;
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return {
    urls,
    pool: conf.get("auth.ldap.pool") as number,
    bindDn: str("auth.ldap.bind_dn"),
    bindPassword: str("auth.ldap.bind_password"),
    timeout: conf.get("auth.ldap.timeout") as number,
    deviceDn: str("auth.ldap.device_dn"),
    objectClass: str("auth.ldap.match_objectclass"),
    usernameAttr: str("auth.ldap.username.attributetype"),
    passwordAttr: str("auth.ldap.password.attributetype"),
    superuserAttr: str("auth.ldap.superuser.attributetype"),
    bindAsUser: conf.get("auth.ldap.bind_as_user") === true,
    onError: conf.get("auth.ldap.on_error") as "ignore" | "deny",
    tls,
  };
}
