// svc_auth_mongo: authentication, superuser and ACL from MongoDB (spec section 5, emqx-facts §5).
// Configured in `<plugins.etc_dir>/svc_auth_mongo.conf`; how a back end that is down is handled:
// db-provider.ts. Selectors are `field=value` pairs, comma separated, with placeholders (`%u %c %a
// %C %d`) in the values; they become documents of strings (no operator can be injected), and a
// client without a value a selector needs is not looked up (unknown here).
//
// - auth_query: the first document of `collection` matching `selector`; `password_field` names the
//   stored hash, or `<hash field>,<salt field>`; an `is_superuser` field set in that document, or
//   the super query's `super_field` being true, makes a superuser.
// - acl_query: every document matching any selector (`selector`, then `selector.<n>` in order);
//   their `publish`, `subscribe`, `pubsub` arrays are an allow list (db-acl.ts).
// The driver keeps a pool of `auth.mongo.pool` connections and reconnects by itself; server
// selection, connection and each query are bounded by `auth.mongo.query_timeout`.

import type { Document, MongoClientOptions } from "mongodb";
import type { ClientInfo } from "../broker/types.ts";
import { loadPluginConf, type PluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";
import { svcConfHint } from "./credential-provider.ts";
import { mongoAclRules } from "./db-acl.ts";
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
  readServers,
  serverEntry,
  throwIssues,
  timeoutEntries,
} from "./db-provider.ts";
import { parseSelector, selectorDoc } from "./db-query.ts";
import { driver } from "./driver.ts";
import type { BackendProviderDeps } from "./http-provider.ts";

export const MONGO_PLUGIN = "svc_auth_mongo";

const str = (def: string, description: string, secret = false) =>
  ({ type: "string", default: def, description, ...(secret ? { secret } : {}) }) as const;

export const MONGO_CONF_SCHEMA: PluginConfSchema = {
  "auth.mongo.type": {
    type: "enum",
    values: ["single", "unknown", "sharded", "rs"],
    default: "single",
    description: "Topology: single server, unknown (discovered), sharded (mongos list) or rs (replica set).",
  },
  ...serverEntry("mongo", "127.0.0.1:27017"),
  "auth.mongo.rs_set_name": str("", "Replica set name (type rs)."),
  ...poolEntry("mongo"),
  "auth.mongo.login": str("", "User to log in as (empty: no login)."),
  "auth.mongo.password": str("", "Password of the login.", true),
  "auth.mongo.auth_source": str("mqtt", "Database holding the login's credentials."),
  "auth.mongo.database": { type: "string", default: "mqtt", nonEmpty: true, description: "Database name." },
  ...timeoutEntries("mongo"),
  "auth.mongo.auth_query.collection": str("mqtt_user", "Collection of the users."),
  "auth.mongo.auth_query.password_field": str("password", "Field of the stored hash, or <hash field>,<salt field>."),
  ...hashEntry("auth.mongo.auth_query.password_hash", "sha256"),
  "auth.mongo.auth_query.selector": str("username=%u", "Selector of a client's user document."),
  "auth.mongo.super_query": { type: "boolean", default: "on", description: "Whether the superuser query runs." },
  "auth.mongo.super_query.collection": str("mqtt_user", "Collection of the superuser flag."),
  "auth.mongo.super_query.super_field": str("is_superuser", "Field of the superuser flag."),
  "auth.mongo.super_query.selector": str("username=%u", "Selector of a client's superuser document."),
  "auth.mongo.acl_query": { type: "boolean", default: "on", description: "Whether ACL documents are read." },
  "auth.mongo.acl_query.collection": str("mqtt_acl", "Collection of the ACL documents."),
  "auth.mongo.acl_query.selector": str("username=%u", "Selector of a client's ACL documents."),
  "auth.mongo.acl_query.selector.$n": {
    type: "string",
    description: "More ACL selectors (selector.1, selector.2...): documents matching any are read.",
  },
};

type Selector = [string, string][];

export interface MongoSettings extends DbCommonSettings {
  kind: "single" | "unknown" | "sharded" | "rs";
  servers: HostPort[];
  rsSetName: string;
  pool: number;
  login: string;
  password: string;
  authSource: string;
  database: string;
  auth: { collection: string; passwordField: string; saltField: string | undefined; selector: Selector };
  super: { collection: string; field: string; selector: Selector } | undefined;
  acl: { collection: string; selectors: Selector[] } | undefined;
}

function readSelector(conf: PluginConf, key: string, issues: string[]): Selector {
  try {
    return parseSelector(conf.get(key) as string);
  } catch (err) {
    issues.push(`${originOf(conf, key, MONGO_PLUGIN)}: ${key}: ${(err as Error).message}`);
    return [];
  }
}

/** `password` or `password,salt`. */
export function parsePasswordField(text: string): { passwordField: string; saltField: string | undefined } {
  const parts = text.split(",").map((p) => p.trim());
  if (parts.length > 2 || parts.some((p) => p === "")) {
    throw new Error(`invalid password field "${text}" (expected <field> or <field>,<salt field>)`);
  }
  return { passwordField: parts[0], saltField: parts[1] };
}

export function loadMongoSettings(dir: string): MongoSettings {
  const conf = loadPluginConf(dir, MONGO_PLUGIN, MONGO_CONF_SCHEMA, { hint: svcConfHint });
  const issues: string[] = [];
  const kind = conf.get("auth.mongo.type") as MongoSettings["kind"];
  const servers = readServers(conf, "auth.mongo.server", 27017, MONGO_PLUGIN, issues);
  const rsSetName = conf.get("auth.mongo.rs_set_name") as string;
  if (kind === "rs" && rsSetName === "") {
    issues.push(`${originOf(conf, "auth.mongo.type", MONGO_PLUGIN)}: auth.mongo.rs_set_name must be set for type rs`);
  }
  if (kind === "single" && servers.length > 1) {
    issues.push(`${originOf(conf, "auth.mongo.server", MONGO_PLUGIN)}: auth.mongo.server: one server for type single`);
  }
  let fields: ReturnType<typeof parsePasswordField> = { passwordField: "password", saltField: undefined };
  try {
    fields = parsePasswordField(conf.get("auth.mongo.auth_query.password_field") as string);
  } catch (err) {
    const key = "auth.mongo.auth_query.password_field";
    issues.push(`${originOf(conf, key, MONGO_PLUGIN)}: ${key}: ${(err as Error).message}`);
  }
  const extra = [...conf.values.keys()]
    .filter((k) => /^auth\.mongo\.acl_query\.selector\.[0-9]+$/.test(k))
    .sort((a, b) => Number(a.split(".").pop()) - Number(b.split(".").pop()));
  const aclSelectors = [
    readSelector(conf, "auth.mongo.acl_query.selector", issues),
    ...extra.map((k) => readSelector(conf, k, issues)),
  ];
  const settings: MongoSettings = {
    kind,
    servers,
    rsSetName,
    target: servers.map((s) => `${s.host}:${s.port}`).join(","),
    pool: conf.get("auth.mongo.pool") as number,
    login: conf.get("auth.mongo.login") as string,
    password: conf.get("auth.mongo.password") as string,
    authSource: conf.get("auth.mongo.auth_source") as string,
    database: conf.get("auth.mongo.database") as string,
    ...readCommon(conf, "mongo", "auth.mongo.auth_query.password_hash", MONGO_PLUGIN, issues),
    auth: {
      collection: conf.get("auth.mongo.auth_query.collection") as string,
      ...fields,
      selector: readSelector(conf, "auth.mongo.auth_query.selector", issues),
    },
    super: conf.get("auth.mongo.super_query")
      ? {
          collection: conf.get("auth.mongo.super_query.collection") as string,
          field: conf.get("auth.mongo.super_query.super_field") as string,
          selector: readSelector(conf, "auth.mongo.super_query.selector", issues),
        }
      : undefined,
    acl: conf.get("auth.mongo.acl_query")
      ? { collection: conf.get("auth.mongo.acl_query.collection") as string, selectors: aclSelectors }
      : undefined,
  };
  throwIssues(issues);
  return settings;
}

/** The user in a document (undefined: no document). */
export function userFromDoc(
  doc: Document | null,
  passwordField: string,
  saltField: string | undefined,
): DbUser | undefined {
  if (doc === null) return undefined;
  const su = doc.is_superuser;
  return {
    password: asText(doc[passwordField]),
    salt: saltField === undefined ? "" : (asText(doc[saltField]) ?? ""),
    ...(su === undefined || su === null ? {} : { superuser: isTruthy(su) }),
  };
}

/** Driver options of the settings (exported for the tests). */
export function mongoOptions(s: MongoSettings): MongoClientOptions {
  return {
    maxPoolSize: s.pool,
    serverSelectionTimeoutMS: s.timeout,
    connectTimeoutMS: s.timeout,
    socketTimeoutMS: s.timeout,
    ...(s.kind === "single" ? { directConnection: true } : {}),
    ...(s.kind === "rs" ? { replicaSet: s.rsSetName } : {}),
    ...(s.login === "" ? {} : { auth: { username: s.login, password: s.password }, authSource: s.authSource }),
  };
}

function openMongo(s: MongoSettings): DbBackend {
  const hosts = s.servers.map((h) => (h.host.includes(":") ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`));
  const { MongoClient } = driver<typeof import("mongodb")>("mongodb");
  const client = new MongoClient(`mongodb://${hosts.join(",")}/`, mongoOptions(s));
  const db = client.db(s.database);
  const opts = { maxTimeMS: s.timeout };
  const { auth, super: sup, acl } = s;
  return {
    findUser: async (c) => {
      const sel = selectorDoc(auth.selector, c);
      if (sel === undefined) return undefined;
      const doc = await db.collection(auth.collection).findOne(sel, opts);
      return userFromDoc(doc, auth.passwordField, auth.saltField);
    },
    ...(sup === undefined
      ? {}
      : {
          isSuperuser: async (c: ClientInfo) => {
            const sel = selectorDoc(sup.selector, c);
            if (sel === undefined) return false;
            const doc = await db.collection(sup.collection).findOne(sel, opts);
            return doc !== null && isTruthy(doc[sup.field]);
          },
        }),
    ...(acl === undefined
      ? {}
      : {
          aclRules: async (c: ClientInfo) => {
            const docs: Document[] = [];
            for (const selector of acl.selectors) {
              const sel = selectorDoc(selector, c);
              if (sel !== undefined) docs.push(...(await db.collection(acl.collection).find(sel, opts).toArray()));
            }
            return mongoAclRules(docs, MONGO_PLUGIN);
          },
        }),
    close: () => client.close(),
  };
}

export const MONGO_FAMILY: DbFamily<MongoSettings> = {
  plugin: MONGO_PLUGIN,
  key: "mongo",
  label: "MongoDB",
  description: "Authentication and ACL from MongoDB",
  aclStyle: "allow_list",
  loadSettings: loadMongoSettings,
  open: openMongo,
};

export function mongoProvider(deps: BackendProviderDeps): DbProvider<MongoSettings> {
  return new DbProvider(MONGO_FAMILY, deps);
}
