// What svc_auth_clientid and svc_auth_username share: a plugin of type `auth` that, while loaded,
// is one provider of the authentication chain. Its credentials live in the cluster store and are
// mirrored in memory (StoreMirror) for the CONNECT path; entries in the plugin's configuration file
// (`<plugins.etc_dir>/<plugin>.conf`: `<prefix>.<n>.<id field> = ...`, `<prefix>.<n>.password =
// ...`, optional `<prefix>.<n>.is_superuser`) are written to the store when the plugin loads (kept
// when they already match, so a restart does not rewrite them). A known id with the right password
// is allowed (superuser when its flag says so), with a wrong or missing password refused with 0x86
// (3.1.1: 4); an unknown id is ignored, so the next provider decides. A provider whose spec says
// `scram` (svc_auth_username) also offers the 5.0 SCRAM-SHA-256 method (scram-method.ts) on the
// same records.

import type { Credentials } from "../broker/hookpoints.ts";
import { type MetricName, type Metrics, metricIndex } from "../broker/metrics.ts";
import type { ClientInfo } from "../broker/types.ts";
import type { ClusterKeys } from "../cluster/keys.ts";
import type { ClusterStore } from "../cluster/store.ts";
import { StoreMirror } from "../cluster/store-mirror.ts";
import { ConfigError } from "../config/config-error.ts";
import { SCHEMA } from "../config/schema.ts";
import type { SchemaEntry } from "../config/schema-types.ts";
import { loadPluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import type { Plugin } from "../plugins/registry.ts";
import type { Logger } from "../telemetry/logger.ts";
import { ALLOW, type AuthAnswer, type AuthChain, type AuthProvider, BAD_PASSWORD } from "./chain.ts";
import {
  type CredentialKind,
  CredentialStore,
  decodeCredential,
  type StoredCredential,
  verifyCredential,
} from "./credential-store.ts";
import type { StoredHash } from "./password-hash.ts";
import { ScramMethod } from "./scram-method.ts";

export interface CredentialProviderDeps {
  chain: AuthChain;
  store: ClusterStore;
  keys: ClusterKeys;
  metrics: Metrics;
  logger: Logger;
  /** Hash of new passwords (`auth.client.password_hash` / `auth.user.password_hash`). */
  hash: StoredHash;
  /** `plugins.etc_dir`: where `<plugin>.conf` is read from. */
  etcDir: string;
  bcryptRounds?: number;
  /** PBKDF2 iterations of the SCRAM keys (`auth.user.scram_iterations`), for a `scram` spec. */
  scramIterations?: number;
}

export interface CredentialProviderSpec {
  name: string;
  description: string;
  kind: CredentialKind;
  /** Preload key prefix: `auth.client` / `auth.user`. */
  prefix: string;
  /** Field naming the id in a preload group: `clientid` / `username`. */
  idField: string;
  /** Metric prefix: `auth.clientid` / `auth.username`. */
  metric: "auth.clientid" | "auth.username";
  /** Picks the id the client presents. */
  idOf(client: ClientInfo, creds: Credentials): string | undefined;
  /** Whether records carry SCRAM keys and the provider offers SCRAM-SHA-256. */
  scram?: boolean;
}

/** Default PBKDF2 iterations of the SCRAM keys. */
export const SCRAM_ITERATIONS = 4096;

export interface Preload {
  id: string;
  password: string;
  superuser: boolean;
  origin: string;
}

/** The plugin configuration schema of a provider: its numbered preload groups. */
export function preloadSchema(prefix: string, idField: string, what: string): PluginConfSchema {
  const entries: Record<string, SchemaEntry> = {
    [`${prefix}.$n.${idField}`]: { type: "string", nonEmpty: true, description: `${what} of a preloaded entry.` },
    [`${prefix}.$n.password`]: {
      type: "string",
      nonEmpty: true,
      secret: true,
      description: "Password of a preloaded entry.",
    },
    [`${prefix}.$n.is_superuser`]: {
      type: "boolean",
      default: "false",
      description: "Whether a preloaded entry is a superuser (skips ACL checks).",
    },
  };
  return entries;
}

/** A hint for settings written in a plugin's file that belong in svc.conf. */
export function svcConfHint(key: string): string | undefined {
  return Object.hasOwn(SCHEMA, key) ? `${key} is a node setting: set it in svc.conf` : undefined;
}

export class CredentialProvider implements Plugin, AuthProvider {
  readonly version = "0.1.0";
  readonly type = "auth" as const;
  readonly name: string;
  readonly description: string;
  readonly credentials: CredentialStore;
  private mirror: StoreMirror<StoredCredential> | undefined;
  private readonly m: { success: number; failure: number; ignore: number };

  constructor(
    private readonly spec: CredentialProviderSpec,
    private readonly deps: CredentialProviderDeps,
  ) {
    this.name = spec.name;
    this.description = spec.description;
    this.credentials = new CredentialStore(deps.store, deps.keys, spec.kind, {
      hash: deps.hash,
      bcryptRounds: deps.bcryptRounds,
      scramIterations: spec.scram === true ? (deps.scramIterations ?? SCRAM_ITERATIONS) : undefined,
    });
    const idx = (k: string) => metricIndex(`${spec.metric}.${k}` as MetricName);
    this.m = { success: idx("success"), failure: idx("failure"), ignore: idx("ignore") };
  }

  /** The entries of the plugin's configuration file; throws ConfigError naming file:line. */
  preloads(): Preload[] {
    const { prefix, idField } = this.spec;
    const conf = loadPluginConf(this.deps.etcDir, this.name, preloadSchema(prefix, idField, idField), {
      hint: svcConfHint,
    });
    const out: Preload[] = [];
    const issues: string[] = [];
    for (const g of conf.groups(prefix)) {
      const id = g.fields[idField]?.value;
      const password = g.fields.password?.value;
      if (typeof id !== "string" || typeof password !== "string") {
        issues.push(`${g.origin}: ${prefix}.${g.n}: needs both ${idField} and password`);
        continue;
      }
      out.push({ id, password, superuser: g.fields.is_superuser?.value === true, origin: g.origin });
    }
    if (issues.length > 0) throw new ConfigError(issues);
    return out;
  }

  async load(): Promise<void> {
    const preloads = this.preloads();
    const mirror = new StoreMirror<StoredCredential>(this.deps.store, {
      prefix: this.credentials.prefix,
      idOf: (key) => this.credentials.idOf(key),
      decode: decodeCredential,
      logger: this.deps.logger,
    });
    await mirror.start();
    this.mirror = mirror;
    try {
      for (const p of preloads) {
        if (await this.credentials.ensure(p.id, p.password, p.superuser)) {
          mirror.apply(p.id, await this.credentials.get(p.id));
        }
      }
    } catch (err) {
      await mirror.stop();
      this.mirror = undefined;
      throw err;
    }
    if (preloads.length > 0) this.deps.logger.info({ plugin: this.name, entries: preloads.length }, "preloaded");
    this.deps.chain.add(this);
    if (this.spec.scram === true) {
      const method = new ScramMethod({
        owner: this.name,
        lookup: (id) => this.mirror?.get(id),
        count: (k) => this.deps.metrics.inc(this.m[k]),
        logger: this.deps.logger,
      });
      this.deps.chain.addMethod(this.name, method);
    }
  }

  async unload(): Promise<void> {
    this.deps.chain.remove(this.name);
    await this.mirror?.stop();
    this.mirror = undefined;
  }

  authenticate(client: ClientInfo, creds: Credentials): AuthAnswer | Promise<AuthAnswer> {
    const metrics = this.deps.metrics;
    const id = this.spec.idOf(client, creds);
    const entry = id === undefined || id === "" ? undefined : this.mirror?.get(id);
    if (entry === undefined) {
      metrics.inc(this.m.ignore);
      return undefined;
    }
    const decide = (ok: boolean): AuthAnswer => {
      metrics.inc(ok ? this.m.success : this.m.failure);
      if (!ok) return BAD_PASSWORD;
      return entry.is_superuser ? { allow: true, superuser: true } : ALLOW;
    };
    if (creds.password === undefined) return decide(false);
    const ok = verifyCredential(entry, creds.password);
    return ok instanceof Promise ? ok.then(decide) : decide(ok);
  }
}
