// Credentials of the clientid and username providers in the cluster store
// (`auth/clientid/<clientid>`, `auth/username/<username>`; docs/architecture.md "Store and key
// layout"), so every node checks the same ones. A value is JSON: the password in the family's stored
// form (4 random salt bytes + hash(salt || password), base64), the hash it was made with (so a later
// change of `auth.*.password_hash` applies to new passwords without breaking old ones), an optional
// superuser flag and the creation time. Username records also carry SCRAM-SHA-256 keys derived
// from the same password (salt, iteration count, StoredKey, ServerKey: auth/scram.ts), so a user can
// log in with a CONNECT password or with the 5.0 SCRAM exchange. Used by the providers (preload) and
// the service layer (API).

import type { ClusterKeys } from "../cluster/keys.ts";
import type { ClusterStore } from "../cluster/store.ts";
import { decodeJson, encodeJson } from "../cluster/store-json.ts";
import { checkStored, makeStored, type StoredHash } from "./password-hash.ts";
import { deriveScram, type ScramCredential } from "./scram.ts";

export type CredentialKind = "clientid" | "username";

export interface StoredCredential {
  /** base64 of salt || hash(salt || password). */
  password: string;
  hash: StoredHash;
  is_superuser: boolean;
  /** Milliseconds since the epoch. */
  created_at: number;
  /** SCRAM-SHA-256 keys (username records; base64 fields). */
  scram?: StoredScram;
}

export interface StoredScram {
  salt: string;
  iterations: number;
  stored_key: string;
  server_key: string;
}

export interface CredentialView {
  id: string;
  is_superuser: boolean;
  created_at: number;
}

export interface CredentialStoreOptions {
  /** Hash of new passwords (`auth.client.password_hash` / `auth.user.password_hash`). */
  hash: StoredHash;
  /** bcrypt cost when `hash` is bcrypt. */
  bcryptRounds?: number;
  /** PBKDF2 iterations of the SCRAM keys; unset: no SCRAM keys are derived. */
  scramIterations?: number;
}

/** The SCRAM keys of a record, decoded; undefined when it has none. */
export function scramOf(entry: StoredCredential): ScramCredential | undefined {
  const s = entry.scram;
  if (s === undefined) return undefined;
  return {
    salt: Buffer.from(s.salt, "base64"),
    iterations: s.iterations,
    storedKey: Buffer.from(s.stored_key, "base64"),
    serverKey: Buffer.from(s.server_key, "base64"),
  };
}

/** Whether `password` is the one of `entry`; synchronous except for bcrypt entries. */
export function verifyCredential(entry: StoredCredential, password: Buffer | string): boolean | Promise<boolean> {
  return checkStored(entry.hash, Buffer.from(entry.password, "base64"), password);
}

export function decodeCredential(value: Buffer): StoredCredential {
  const v = decodeJson<StoredCredential>(value);
  if (typeof v.password !== "string" || typeof v.hash !== "string") throw new Error("not a credential record");
  const s = v.scram;
  const scram =
    s !== undefined &&
    typeof s.salt === "string" &&
    Number.isInteger(s.iterations) &&
    typeof s.stored_key === "string" &&
    typeof s.server_key === "string"
      ? s
      : undefined;
  return { ...v, is_superuser: v.is_superuser === true, created_at: Number(v.created_at) || 0, scram };
}

export class CredentialStore {
  readonly prefix: string;

  constructor(
    private readonly store: ClusterStore,
    private readonly keys: ClusterKeys,
    readonly kind: CredentialKind,
    private readonly opts: CredentialStoreOptions,
  ) {
    this.prefix = kind === "clientid" ? keys.authClientids() : keys.authUsernames();
  }

  key(id: string): string {
    return this.kind === "clientid" ? this.keys.authClientid(id) : this.keys.authUsername(id);
  }

  /** The id of a key under the prefix (undefined for anything else). */
  idOf(key: string): string | undefined {
    if (!key.startsWith(this.prefix) || key.indexOf("/", this.prefix.length) >= 0) return undefined;
    return this.keys.leaf(key, this.prefix);
  }

  async list(): Promise<CredentialView[]> {
    const r = await this.store.range(this.prefix);
    const out: CredentialView[] = [];
    for (const e of r.entries) {
      const id = this.idOf(e.key);
      if (id === undefined) continue;
      try {
        const c = decodeCredential(e.value);
        out.push({ id, is_superuser: c.is_superuser, created_at: c.created_at });
      } catch {
        // An unreadable record is not listed (the provider logs it).
      }
    }
    return out;
  }

  async get(id: string): Promise<StoredCredential | undefined> {
    const e = await this.store.get(this.key(id));
    return e === undefined ? undefined : decodeCredential(e.value);
  }

  private async make(password: string, superuser: boolean, createdAt = Date.now()): Promise<StoredCredential> {
    const stored = await makeStored(this.opts.hash, password, this.opts.bcryptRounds);
    const rec: StoredCredential = {
      password: stored.toString("base64"),
      hash: this.opts.hash,
      is_superuser: superuser,
      created_at: createdAt,
    };
    const iterations = this.opts.scramIterations;
    if (iterations !== undefined) {
      const k = await deriveScram(password, iterations);
      rec.scram = {
        salt: k.salt.toString("base64"),
        iterations,
        stored_key: k.storedKey.toString("base64"),
        server_key: k.serverKey.toString("base64"),
      };
    }
    return rec;
  }

  /** Creates an entry; "exists" (nothing written) when the id has one. */
  async add(id: string, password: string, superuser = false): Promise<"ok" | "exists"> {
    const k = this.key(id);
    const rec = await this.make(password, superuser);
    const done = await this.store.txn({
      compare: [{ key: k, target: "version", op: "==", value: 0 }],
      success: [{ type: "put", key: k, value: encodeJson(rec) }],
    });
    return done ? "ok" : "exists";
  }

  /** Replaces the password (and the flag when given) of an existing entry. */
  async update(id: string, password: string, superuser?: boolean): Promise<"ok" | "not_found"> {
    const k = this.key(id);
    for (;;) {
      const e = await this.store.get(k);
      if (e === undefined) return "not_found";
      const old = decodeCredential(e.value);
      const rec = await this.make(password, superuser ?? old.is_superuser, old.created_at);
      const done = await this.store.txn({
        compare: [{ key: k, target: "mod", op: "==", value: e.modRevision }],
        success: [{ type: "put", key: k, value: encodeJson(rec) }],
      });
      if (done) return "ok";
    }
  }

  async remove(id: string): Promise<boolean> {
    return this.store.delete(this.key(id));
  }

  /**
   * Makes the entry say `password` and `superuser` (a preload from the plugin's file): written when
   * absent or different, left alone when it already verifies. Returns whether it wrote.
   */
  async ensure(id: string, password: string, superuser: boolean): Promise<boolean> {
    const old = await this.get(id).catch(() => undefined);
    const scramOk = this.opts.scramIterations === undefined || old?.scram?.iterations === this.opts.scramIterations;
    if (old !== undefined && old.is_superuser === superuser && scramOk && (await verifyCredential(old, password)))
      return false;
    const rec = await this.make(password, superuser, old?.created_at);
    await this.store.put(this.key(id), encodeJson(rec));
    return true;
  }
}
