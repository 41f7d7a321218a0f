// A small pool of LDAP connections (ldapts) for svc_auth_ldap: `size` connections, each bound with
// the service account and opened on first use. A connection that fails (refused, closed, timed
// out, the service bind refused) is dropped and opened again (on the next server of the list) by
// the next operation, so the pool recovers by itself when the directory comes back. Every
// operation, the wait for a free connection included, ends within `timeout` ms: LdapUnavailable
// then (the provider logs it, raises its alarm and answers per on_error).

import type { ConnectionOptions } from "node:tls";
import type { Client, Entry } from "ldapts";
import { driver } from "./driver.ts";

/** The ldapts module, loaded with the first connection. */
const ldapts = () => driver<typeof import("ldapts")>("ldapts");

export interface LdapPoolOptions {
  /** `ldap://host:port` or `ldaps://host:port`, tried in turn. */
  urls: string[];
  size: number;
  /** Limit of one operation (ms), waiting for a connection included. */
  timeout: number;
  bindDn: string;
  bindPassword: string;
  tls?: ConnectionOptions;
}

/** The directory could not be reached, or did not answer in time. */
export class LdapUnavailable extends Error {
  constructor(
    message: string,
    readonly url: string | undefined,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "LdapUnavailable";
  }
}

interface Slot {
  client: Client | undefined;
  busy: boolean;
}

export interface SearchSpec {
  base: string;
  filter: string;
  attributes: string[];
}

export class LdapPool {
  private readonly slots: Slot[];
  private readonly waiters: ((s: Slot) => void)[] = [];
  private next = 0;
  private closed = false;

  constructor(private readonly opts: LdapPoolOptions) {
    this.slots = Array.from({ length: opts.size }, () => ({ client: undefined, busy: false }));
  }

  /** Entries under `base` matching `filter` (none when `base` does not exist). */
  async search(s: SearchSpec): Promise<Entry[]> {
    return this.run(async (c) => {
      try {
        const r = await c.search(s.base, { scope: "sub", filter: s.filter, attributes: s.attributes });
        return r.searchEntries;
      } catch (err) {
        if (err instanceof ldapts().NoSuchObjectError) return [];
        throw err;
      }
    });
  }

  /** Whether `dn` binds with `password` (a connection of its own, closed after). */
  async bindAs(dn: string, password: string): Promise<boolean> {
    if (password === "") return false; // an empty password would be an unauthenticated bind
    const url = this.url();
    const c = this.client(url);
    const op = (async () => {
      try {
        await c.bind(dn, password);
        return true;
      } catch (err) {
        if (err instanceof ldapts().InvalidCredentialsError) return false;
        throw new LdapUnavailable(describeLdapError(err), url, { cause: err });
      } finally {
        void c.unbind().catch(() => undefined);
      }
    })();
    return this.within(op, url);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const s of this.slots) this.drop(s);
    for (const w of this.waiters.splice(0)) w({ client: undefined, busy: true });
  }

  private url(): string {
    return this.opts.urls[this.next % this.opts.urls.length];
  }

  private client(url: string): Client {
    return new (ldapts().Client)({
      url,
      timeout: this.opts.timeout,
      connectTimeout: this.opts.timeout,
      tlsOptions: this.opts.tls,
      strictDN: false,
    });
  }

  private drop(s: Slot): void {
    const c = s.client;
    s.client = undefined;
    if (c !== undefined) void c.unbind().catch(() => undefined);
  }

  private async run<T>(op: (c: Client) => Promise<T>): Promise<T> {
    if (this.closed) throw new LdapUnavailable("pool closed", undefined);
    const deadline = Date.now() + this.opts.timeout;
    const slot = await this.acquire(deadline);
    let url: string | undefined;
    try {
      if (slot.client === undefined) {
        url = this.url();
        slot.client = this.client(url);
      }
      const c = slot.client;
      const work = (async () => {
        if (!c.isConnected || !c.isBound) await c.bind(this.opts.bindDn, this.opts.bindPassword);
        return op(c);
      })();
      return await this.within(work, url, deadline);
    } catch (err) {
      // Anything but an answer of the directory: drop the connection, use the next server next time.
      this.drop(slot);
      this.next++;
      if (err instanceof LdapUnavailable) throw err;
      throw new LdapUnavailable(describeLdapError(err), url, { cause: err });
    } finally {
      this.release(slot);
    }
  }

  private within<T>(p: Promise<T>, url: string | undefined, deadline = Date.now() + this.opts.timeout): Promise<T> {
    let t: NodeJS.Timeout | undefined;
    const timer = new Promise<never>((_, reject) => {
      t = setTimeout(() => reject(new LdapUnavailable("timed out", url)), Math.max(0, deadline - Date.now()));
    });
    p.catch(() => undefined);
    return Promise.race([p, timer]).finally(() => clearTimeout(t));
  }

  private acquire(deadline: number): Promise<Slot> {
    const free = this.slots.find((s) => !s.busy);
    if (free !== undefined) {
      free.busy = true;
      return Promise.resolve(free);
    }
    return new Promise<Slot>((resolve, reject) => {
      const w = (s: Slot) => {
        clearTimeout(t);
        if (this.closed) reject(new LdapUnavailable("pool closed", undefined));
        else resolve(s);
      };
      const t = setTimeout(() => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(new LdapUnavailable("timed out waiting for a connection", undefined));
      }, deadline - Date.now());
      this.waiters.push(w);
    });
  }

  private release(s: Slot): void {
    const w = this.waiters.shift();
    if (w !== undefined) w(s);
    else s.busy = false;
  }
}

export function describeLdapError(err: unknown): string {
  if (err instanceof ldapts().InvalidCredentialsError) return "the service bind was refused (bind_dn / bind_password)";
  const code = (err as { code?: unknown })?.code;
  if (typeof code === "string") return code;
  return err instanceof Error ? err.message : String(err);
}
