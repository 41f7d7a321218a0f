// Credentials of svc_auth_clientid and svc_auth_username for the API (`/auth_clientid`,
// `/auth_username`) and the CLI (`clientid|user list|add|update|del`): list, look up, add one or
// many, change a password, delete. Entries are data in the cluster store: they can be managed
// whether or not the plugin is loaded, and every node's provider sees a change at once (its
// mirror watches the store). Passwords are never shown; new ones are hashed with the provider's
// `password_hash` setting.

import type { CredentialStore } from "../auth/credential-store.ts";

export interface AuthEntryRecord {
  id: string;
  is_superuser: boolean;
  /** Milliseconds since the epoch. */
  created_at: number;
}

export interface NewAuthEntry {
  id: string;
  password: string;
  is_superuser?: boolean;
}

export class AuthEntryService {
  constructor(private readonly creds: CredentialStore) {}

  /** `clientid` or `username`. */
  get kind(): "clientid" | "username" {
    return this.creds.kind;
  }

  async list(): Promise<AuthEntryRecord[]> {
    return this.creds.list();
  }

  async get(id: string): Promise<AuthEntryRecord | undefined> {
    const c = await this.creds.get(id);
    return c === undefined ? undefined : { id, is_superuser: c.is_superuser, created_at: c.created_at };
  }

  async add(e: NewAuthEntry): Promise<"ok" | "exists"> {
    return this.creds.add(e.id, e.password, e.is_superuser === true);
  }

  /** Adds each entry; the outcome per id: "ok", or "existed" when the id had an entry. */
  async addMany(list: NewAuthEntry[]): Promise<Record<string, "ok" | "existed">> {
    const out: Record<string, "ok" | "existed"> = {};
    for (const e of list) out[e.id] = (await this.add(e)) === "ok" ? "ok" : "existed";
    return out;
  }

  async update(id: string, password: string, isSuperuser?: boolean): Promise<"ok" | "not_found"> {
    return this.creds.update(id, password, isSuperuser);
  }

  async remove(id: string): Promise<boolean> {
    return this.creds.remove(id);
  }
}
