// Data export and import (emqx-facts §3.3 `/data/export`, `/data/import`, `/data/file`): every
// cluster-scoped record of the store (rule engine rules and resources, bans, management
// applications, dashboard users, clientid/username credentials, ACL entries) in one JSON document
//
//   {version, date, node, rules, resources, blacklist, apps, users, auth_clientid, auth_username, acl}
//
// with the stored values as they are (secrets and passwords stay hashed). Auth entries carry their
// id (`clientid` / `username`) beside the stored value; ACL entries carry `as` (clientid, username,
// all), `who` (not for `all`) and `topic` beside it; rules and resources their `id`.
//
// An export is written to `<data_dir>/backup/svc-export-Y-M-D-H-M-S.json` (local time, unpadded as
// the family's; a second export within the same second gets `-2`, `-3`... rather than replacing the
// first). Backup files are listed on every running node, read, deleted and uploaded on this one;
// names are one plain file name ending in `.json`. An import (a backup file of any running node,
// or the document itself) is validated whole first, then written in store transactions: a record
// with the same key is replaced, nothing else is deleted. Bans, credentials and ACL entries apply
// at once (their mirrors watch the store).

import { randomBytes } from "node:crypto";
import { link, mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { isIP } from "node:net";
import { join } from "node:path";
import { BAN_KINDS, type BanRecord } from "../auth/banned.ts";
import { STORED_HASHES } from "../auth/password-hash.ts";
import { type ClusterKeys, decodeSegment } from "../cluster/keys.ts";
import type { ClusterStore, TxnOp } from "../cluster/store.ts";
import { decodeJson, encodeJson } from "../cluster/store-json.ts";
import type { StoredApp } from "./apps.ts";
import type { ClusterCalls } from "./cluster-calls.ts";
import { formatDatetime } from "./format.ts";
import type { StoredUser } from "./users.ts";

/** Format version of the document; an import accepts these. */
export const DATA_VERSION = "1";
export const DATA_VERSIONS: readonly string[] = [DATA_VERSION];
/** Store operations per transaction (etcd's default limit is 128). */
const TXN_OPS = 100;
const FILE_NAME = /^[A-Za-z0-9_-][A-Za-z0-9._-]{0,250}\.json$/;

export const DATA_KINDS = [
  "rules",
  "resources",
  "blacklist",
  "apps",
  "users",
  "auth_clientid",
  "auth_username",
  "acl",
] as const;
export type DataKind = (typeof DATA_KINDS)[number];

type Json = Record<string, unknown>;

export interface AuthEntryExport {
  password: string;
  hash: string;
  is_superuser: boolean;
  created_at: number;
  [k: string]: unknown;
}

export interface AclExport {
  as: "clientid" | "username" | "all";
  who?: string;
  topic: string;
  [k: string]: unknown;
}

export interface DataDocument {
  version: string;
  /** `YYYY-MM-DD HH:MM:SS`, local time. */
  date: string;
  /** The node that exported. */
  node: string;
  rules: Json[];
  resources: Json[];
  blacklist: BanRecord[];
  apps: StoredApp[];
  users: StoredUser[];
  auth_clientid: (AuthEntryExport & { clientid: string })[];
  auth_username: (AuthEntryExport & { username: string })[];
  acl: AclExport[];
}

/** A backup file: `created_at` is its modification time, `YYYY-MM-DD HH:MM:SS`. */
export interface BackupFile {
  filename: string;
  size: number;
  created_at: string;
  node: string;
}

export type ImportCounts = Record<DataKind, number>;

/** What an import, an upload or a file lookup can fail with. */
export class DataError extends Error {
  override readonly name = "DataError";

  constructor(
    readonly reason: "bad_name" | "not_found" | "bad_document" | "exists" | "unknown_node",
    message: string,
  ) {
    super(message);
  }
}

export interface DataServiceOptions {
  store: ClusterStore;
  keys: ClusterKeys;
  /** `node.data_dir`: backups go to its `backup/`. */
  dataDir: string;
  calls: ClusterCalls;
  /** Called after an import (clears cached secret checks). */
  onImported?: () => void;
  now?: () => number;
}

export class DataService {
  readonly dir: string;
  private readonly store: ClusterStore;
  private readonly keys: ClusterKeys;
  private readonly calls: ClusterCalls;
  private readonly now: () => number;

  constructor(private readonly opts: DataServiceOptions) {
    this.store = opts.store;
    this.keys = opts.keys;
    this.calls = opts.calls;
    this.now = opts.now ?? Date.now;
    this.dir = join(opts.dataDir, "backup");
    this.calls.register("mgmt.dataFiles", () => this.localFiles());
    this.calls.register("mgmt.dataFile", (a) => this.readLocal((a as { filename: string }).filename).catch(noFile));
  }

  /** Whether `name` is acceptable as a backup file name. */
  static validName(name: string): boolean {
    return FILE_NAME.test(name);
  }

  /** The document of every cluster-scoped record, as stored now. */
  async document(): Promise<DataDocument> {
    const k = this.keys;
    const values = async (prefix: string) => (await this.store.range(prefix)).entries;
    const doc: DataDocument = {
      version: DATA_VERSION,
      date: formatDatetime(this.now()),
      node: this.calls.self,
      rules: [],
      resources: [],
      blacklist: [],
      apps: [],
      users: [],
      auth_clientid: [],
      auth_username: [],
      acl: [],
    };
    for (const [kind, prefix] of [
      ["rules", k.rules()],
      ["resources", k.resources()],
    ] as const) {
      for (const e of await values(prefix)) {
        const v = objectOf(e.value);
        if (v !== undefined) doc[kind].push({ id: k.leaf(e.key, prefix), ...v });
      }
    }
    for (const e of await values(k.banned())) {
      const v = objectOf(e.value);
      if (v !== undefined) doc.blacklist.push(v as unknown as BanRecord);
    }
    for (const e of await values(k.apps())) {
      const v = objectOf(e.value);
      if (v !== undefined) doc.apps.push(v as unknown as StoredApp);
    }
    for (const e of await values(k.users())) {
      const v = objectOf(e.value);
      if (v !== undefined) doc.users.push(v as unknown as StoredUser);
    }
    for (const e of await values(k.authClientids())) {
      const id = childOf(e.key, k.authClientids());
      const v = objectOf(e.value);
      if (id !== undefined && v !== undefined) doc.auth_clientid.push({ clientid: id, ...(v as AuthEntryExport) });
    }
    for (const e of await values(k.authUsernames())) {
      const id = childOf(e.key, k.authUsernames());
      const v = objectOf(e.value);
      if (id !== undefined && v !== undefined) doc.auth_username.push({ username: id, ...(v as AuthEntryExport) });
    }
    for (const e of await values(k.acl())) {
      const where = aclWhere(e.key.slice(k.acl().length));
      const v = objectOf(e.value);
      if (where !== undefined && v !== undefined) doc.acl.push({ ...v, ...where });
    }
    return doc;
  }

  /** Writes the document to a new backup file. */
  async export(): Promise<BackupFile> {
    const doc = await this.document();
    await mkdir(this.dir, { recursive: true });
    const d = new Date(this.now());
    const base = `svc-export-${d.getFullYear()}-${d.getMonth() + 1}-${d.getDate()}-${d.getHours()}-${d.getMinutes()}-${d.getSeconds()}`;
    const text = `${JSON.stringify(doc, null, 2)}\n`;
    for (let n = 1; ; n++) {
      const filename = n === 1 ? `${base}.json` : `${base}-${n}.json`;
      if (await this.writeNew(filename, text)) return this.info(filename);
    }
  }

  /** Backup files of every running node (a node that does not answer is left out), by node then name. */
  async list(): Promise<BackupFile[]> {
    const nodes = this.calls.nodes();
    const settled = await Promise.allSettled(nodes.map((n) => this.calls.call<BackupFile[]>(n, "mgmt.dataFiles", {})));
    return settled.flatMap((s) => (s.status === "fulfilled" ? s.value : []));
  }

  /** This node's backup files, by name. */
  async localFiles(): Promise<BackupFile[]> {
    let names: string[];
    try {
      names = await readdir(this.dir);
    } catch {
      return [];
    }
    const out: BackupFile[] = [];
    for (const name of names.filter((f) => DataService.validName(f)).sort()) {
      try {
        out.push(await this.info(name));
      } catch {
        // Deleted meanwhile, or not a file.
      }
    }
    return out;
  }

  /** The text of a backup file of this node; DataError bad_name / not_found. */
  async readLocal(filename: string): Promise<string> {
    const path = this.pathOf(filename);
    try {
      return await readFile(path, "utf8");
    } catch {
      throw new DataError("not_found", `backup file not found: ${filename}`);
    }
  }

  /** Deletes a backup file of this node; DataError bad_name / not_found. */
  async remove(filename: string): Promise<void> {
    const path = this.pathOf(filename);
    try {
      if (!(await stat(path)).isFile()) throw new Error("not a file");
      await rm(path);
    } catch {
      throw new DataError("not_found", `backup file not found: ${filename}`);
    }
  }

  /**
   * Stores an uploaded backup file: `file` is the document or its JSON text; it must be a valid
   * document. DataError bad_name, bad_document, or exists (a file of that name is kept).
   */
  async upload(filename: string, file: unknown): Promise<BackupFile> {
    this.pathOf(filename);
    const doc = typeof file === "string" ? parseDocument(file) : file;
    validateDocument(doc);
    await mkdir(this.dir, { recursive: true });
    const text = typeof file === "string" ? file : `${JSON.stringify(file, null, 2)}\n`;
    if (!(await this.writeNew(filename, text))) throw new DataError("exists", `backup file exists: ${filename}`);
    return this.info(filename);
  }

  /** Imports the backup file `filename` of `node` (default this one). */
  async importFile(filename: string, node?: string): Promise<ImportCounts> {
    this.pathOf(filename);
    let text: string;
    if (node === undefined || node === this.calls.self) text = await this.readLocal(filename);
    else {
      if (!this.calls.nodes().includes(node)) throw new DataError("unknown_node", `node not found: ${node}`);
      const got = await this.calls.call<string | null>(node, "mgmt.dataFile", { filename });
      if (got === null) throw new DataError("not_found", `backup file not found: ${filename}`);
      text = got;
    }
    return this.import(parseDocument(text));
  }

  /** Validates the document whole, then writes its records (same key replaced); the count per kind. */
  async import(doc: unknown): Promise<ImportCounts> {
    const valid = validateDocument(doc);
    const k = this.keys;
    const writes = new Map<string, { kind: DataKind; value: unknown }>();
    const put = (kind: DataKind, key: string, value: unknown) => writes.set(key, { kind, value });
    for (const r of valid.rules) put("rules", k.rule(r.id as string), r);
    for (const r of valid.resources) put("resources", k.resource(r.id as string), r);
    for (const b of valid.blacklist) put("blacklist", k.ban(b.as, b.who), b);
    for (const a of valid.apps) put("apps", k.app(a.app_id), a);
    for (const u of valid.users) put("users", k.user(u.username), u);
    for (const { clientid, ...v } of valid.auth_clientid) put("auth_clientid", k.authClientid(clientid), v);
    for (const { username, ...v } of valid.auth_username) put("auth_username", k.authUsername(username), v);
    for (const { as, who, topic, ...v } of valid.acl) put("acl", k.aclRule(as, who, topic), v);

    const counts = Object.fromEntries(DATA_KINDS.map((kind) => [kind, 0])) as ImportCounts;
    const ops: TxnOp[] = [];
    for (const [key, w] of writes) {
      ops.push({ type: "put", key, value: encodeJson(w.value) });
      counts[w.kind]++;
    }
    try {
      for (let i = 0; i < ops.length; i += TXN_OPS)
        await this.store.txn({ compare: [], success: ops.slice(i, i + TXN_OPS) });
    } finally {
      this.opts.onImported?.();
    }
    return counts;
  }

  /** The path of a backup file; DataError bad_name unless `filename` is one plain `.json` name. */
  private pathOf(filename: string): string {
    if (!DataService.validName(filename))
      throw new DataError("bad_name", `bad file name: ${filename} (a plain name ending in .json)`);
    return join(this.dir, filename);
  }

  private async info(filename: string): Promise<BackupFile> {
    const s = await stat(this.pathOf(filename));
    if (!s.isFile()) throw new DataError("not_found", `backup file not found: ${filename}`);
    return { filename, size: s.size, created_at: formatDatetime(s.mtimeMs), node: this.calls.self };
  }

  /** Writes a new file through a temporary one; false (nothing written) when the name exists. */
  private async writeNew(filename: string, text: string): Promise<boolean> {
    const path = this.pathOf(filename);
    const tmp = join(this.dir, `.${filename}.${randomBytes(6).toString("hex")}.tmp`);
    await writeFile(tmp, text, { flag: "wx", mode: 0o600 });
    try {
      // A hard link: the whole file appears at once, and never replaces one of the same name.
      await link(tmp, path);
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "EEXIST") return false;
      throw err;
    } finally {
      await rm(tmp, { force: true });
    }
  }
}

const noFile = (err: unknown): null => {
  if (err instanceof DataError && err.reason !== "bad_name") return null;
  throw err;
};

function objectOf(value: Buffer): Json | undefined {
  try {
    const v = decodeJson<unknown>(value);
    return isObject(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/** The id of a key directly under `prefix`. */
function childOf(key: string, prefix: string): string | undefined {
  const rest = key.startsWith(prefix) ? key.slice(prefix.length) : undefined;
  return rest === undefined || rest.length === 0 || rest.includes("/") ? undefined : decodeSegment(rest);
}

/** `clientid/<id>/<topic>`, `username/<name>/<topic>` or `all/<topic>` (segments escaped). */
function aclWhere(rest: string): Pick<AclExport, "as" | "who" | "topic"> | undefined {
  const parts = rest.split("/");
  if (parts[0] === "all" && parts.length === 2) return { as: "all", topic: decodeSegment(parts[1]) };
  if ((parts[0] === "clientid" || parts[0] === "username") && parts.length === 3)
    return { as: parts[0], who: decodeSegment(parts[1]), topic: decodeSegment(parts[2]) };
  return undefined;
}

function isObject(v: unknown): v is Json {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

function parseDocument(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    throw new DataError("bad_document", "backup file is not JSON");
  }
}

// ---- validation ---------------------------------------------------------------------------------

type Check = (v: unknown) => boolean;

const str: Check = (v) => typeof v === "string";
const name: Check = (v) => typeof v === "string" && v.length > 0;
const bool: Check = (v) => typeof v === "boolean";
const nat: Check = (v) => typeof v === "number" && Number.isInteger(v) && v >= 0;
const oneOf =
  (values: readonly string[]): Check =>
  (v) =>
    typeof v === "string" && values.includes(v);

const SHAPES: Record<Exclude<DataKind, "acl" | "rules" | "resources">, Record<string, [Check, string]>> = {
  blacklist: {
    who: [name, "a non-empty string"],
    as: [oneOf(BAN_KINDS), "clientid, username or peerhost"],
    by: [str, "a string"],
    reason: [str, "a string"],
    at: [nat, "seconds since the epoch"],
    until: [nat, "seconds since the epoch"],
  },
  apps: {
    app_id: [name, "a non-empty string"],
    name: [str, "a string"],
    desc: [str, "a string"],
    status: [bool, "a boolean"],
    expired: [(v) => v === "undefined" || nat(v), 'seconds since the epoch or "undefined"'],
    secret_hash: [name, "a non-empty string"],
  },
  users: {
    username: [name, "a non-empty string"],
    tags: [str, "a string"],
    password_hash: [name, "a non-empty string"],
  },
  auth_clientid: {
    clientid: [name, "a non-empty string"],
    password: [str, "a base64 string"],
    hash: [oneOf(STORED_HASHES), STORED_HASHES.join(", ")],
    is_superuser: [bool, "a boolean"],
    created_at: [nat, "milliseconds since the epoch"],
  },
  auth_username: {
    username: [name, "a non-empty string"],
    password: [str, "a base64 string"],
    hash: [oneOf(STORED_HASHES), STORED_HASHES.join(", ")],
    is_superuser: [bool, "a boolean"],
    created_at: [nat, "milliseconds since the epoch"],
    scram: [
      (v) =>
        v === undefined || (isObject(v) && str(v.salt) && nat(v.iterations) && str(v.stored_key) && str(v.server_key)),
      "absent or {salt, iterations, stored_key, server_key} (SCRAM-SHA-256 keys)",
    ],
  },
};

const ACL_SHAPE: Record<string, [Check, string]> = {
  as: [oneOf(["clientid", "username", "all"]), "clientid, username or all"],
  topic: [name, "a non-empty string"],
  action: [oneOf(["pub", "sub", "pubsub"]), "pub, sub or pubsub"],
  access: [oneOf(["allow", "deny"]), "allow or deny"],
};

const bad = (where: string, what: string): DataError => new DataError("bad_document", `${where}: ${what}`);

/**
 * Checks a document: `version` one of DATA_VERSIONS, each kind (absent = none) an array of records
 * of its shape; the first fault is a DataError bad_document naming where it is.
 */
export function validateDocument(doc: unknown): DataDocument {
  if (!isObject(doc)) throw bad("document", "must be a JSON object");
  if (doc.version === undefined) throw bad("version", "missing");
  if (typeof doc.version !== "string" || !DATA_VERSIONS.includes(doc.version))
    throw bad("version", `unsupported version ${JSON.stringify(doc.version)} (supported: ${DATA_VERSIONS.join(", ")})`);
  const out = {
    version: doc.version,
    date: typeof doc.date === "string" ? doc.date : "",
    node: typeof doc.node === "string" ? doc.node : "",
  } as DataDocument;
  for (const kind of DATA_KINDS) {
    const list = doc[kind] ?? [];
    if (!Array.isArray(list)) throw bad(kind, "must be an array");
    list.forEach((item, i) => {
      const where = `${kind}.${i}`;
      if (!isObject(item)) throw bad(where, "must be an object");
      const shape = kind === "acl" ? ACL_SHAPE : kind === "rules" || kind === "resources" ? undefined : SHAPES[kind];
      if (shape === undefined) {
        if (!name(item.id)) throw bad(`${where}.id`, "must be a non-empty string");
        return;
      }
      for (const [field, [check, what]] of Object.entries(shape)) {
        if (!check(item[field])) throw bad(`${where}.${field}`, `must be ${what}`);
      }
      if (kind === "blacklist" && item.as === "peerhost" && isIP(item.who as string) === 0)
        throw bad(`${where}.who`, "must be an IP address");
      if (kind === "acl") {
        if (item.as === "all" ? item.who !== undefined : !name(item.who))
          throw bad(`${where}.who`, item.as === "all" ? "must be absent for all" : "must be a non-empty string");
      }
    });
    (out as unknown as Record<string, unknown[]>)[kind] = list.map((item: Json) => pick(kind, item));
  }
  return out;
}

/** Typed records keep their fields only; rules, resources and ACL entries keep everything. */
function pick(kind: DataKind, item: Json): Json {
  if (kind === "rules" || kind === "resources" || kind === "acl") return { ...item };
  const out: Json = {};
  for (const field of Object.keys(SHAPES[kind])) if (item[field] !== undefined) out[field] = item[field];
  return out;
}
