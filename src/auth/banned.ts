// Bans (spec section 2 "Ban record", emqx-facts §3.3): records `{who, as, by, reason, at, until}`
// (`as` = clientid | username | peerhost, `at`/`until` in seconds since the epoch) kept in the
// cluster store under `banned/<as>/<who>`, mirrored in memory by a watch so every node refuses the
// same clients. A built-in feature, as in the family (zone option `enable_ban`), started by main.ts:
//
// - on `client.authenticate` at PRIORITY.banned (before every provider) a client whose client id,
//   user name or peer address is banned is refused with 0x8A Banned (3.1.1: 5 not authorized);
//   the 5.0 AUTH exchange (`client.enhanced_auth`) is refused the same way on its first step;
// - a ban appearing (made on any node) kicks the matching clients connected to this node;
// - a ban past its `until` no longer applies, and a sweep (every `sweepInterval`) deletes it.

import { isIP } from "node:net";
import type { Broker } from "../broker/broker.ts";
import type { AuthResult, Credentials, EnhancedAuthResult, EnhancedAuthStep } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import type { BanKind, ClusterKeys } from "../cluster/keys.ts";
import { decodeSegment } from "../cluster/keys.ts";
import type { ClusterStore } from "../cluster/store.ts";
import { decodeJson, encodeJson } from "../cluster/store-json.ts";
import { StoreMirror } from "../cluster/store-mirror.ts";
import { stop } from "../hooks/hooks.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { RC } from "../mqtt/reason-codes.ts";
import type { Logger } from "../telemetry/logger.ts";

export type { BanKind };
export const BAN_KINDS: readonly BanKind[] = ["clientid", "username", "peerhost"];
export const BANNED_OWNER = "svc_banned";

export interface BanRecord {
  who: string;
  as: BanKind;
  by: string;
  reason: string;
  /** Seconds since the epoch. */
  at: number;
  /** Seconds since the epoch; the ban applies while now < until. */
  until: number;
}

export interface BansOptions {
  /** Whether a zone's clients are checked (`zone.<zone>.enable_ban`). */
  enabled: (zone: string) => boolean;
  logger: Logger;
  /** Period of the expiry sweep (ms); default 1 s. */
  sweepInterval?: number;
  now?: () => number;
}

export function isBanKind(v: string): v is BanKind {
  return (BAN_KINDS as readonly string[]).includes(v);
}

/** The form a peer address is compared in: IPv6 compressed and lower case, IPv4-mapped as IPv4. */
export function canonicalHost(host: string): string {
  if (isIP(host) !== 6) return host;
  const v6 = new URL(`http://[${host}]/`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(v6);
  if (mapped === null) return v6;
  const hi = Number.parseInt(mapped[1], 16);
  const lo = Number.parseInt(mapped[2], 16);
  return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
}

function decodeBan(value: Buffer): BanRecord {
  const b = decodeJson<BanRecord>(value);
  if (typeof b.who !== "string" || !isBanKind(b.as)) throw new Error("not a ban record");
  return {
    who: b.who,
    as: b.as,
    by: String(b.by ?? ""),
    reason: String(b.reason ?? ""),
    at: Number(b.at) || 0,
    until: Number(b.until) || 0,
  };
}

const idOf = (as: BanKind, who: string): string => `${as}/${who}`;

export class Bans {
  private readonly mirror: StoreMirror<BanRecord>;
  private timer: NodeJS.Timeout | undefined;
  private readonly now: () => number;

  constructor(
    private readonly broker: Broker,
    private readonly store: ClusterStore,
    private readonly keys: ClusterKeys,
    private readonly opts: BansOptions,
  ) {
    this.now = opts.now ?? Date.now;
    const prefix = keys.banned();
    this.mirror = new StoreMirror<BanRecord>(store, {
      prefix,
      idOf: (key) => {
        const rest = key.slice(prefix.length);
        const slash = rest.indexOf("/");
        const as = rest.slice(0, slash);
        if (slash < 0 || !isBanKind(as) || rest.indexOf("/", slash + 1) >= 0) return undefined;
        return idOf(as, decodeSegment(rest.slice(slash + 1)));
      },
      decode: decodeBan,
      onChange: (_id, now) => {
        if (now !== undefined && this.active(now)) this.kickMatching(now);
      },
      logger: opts.logger,
    });
  }

  async start(): Promise<void> {
    await this.mirror.start();
    const hooks = this.broker.hooks;
    hooks.add(
      "client.authenticate",
      (client: ClientInfo, _creds: Credentials, _acc: AuthResult) =>
        this.refuses(client) ? stop<AuthResult>({ rc: RC.BANNED, superuser: false, by: "banned" }) : undefined,
      PRIORITY.banned,
      BANNED_OWNER,
    );
    hooks.add(
      "client.enhanced_auth",
      (client: ClientInfo, step: EnhancedAuthStep, _acc: EnhancedAuthResult) =>
        step.step === 0 && this.refuses(client) ? stop<EnhancedAuthResult>({ rc: RC.BANNED }) : undefined,
      PRIORITY.banned,
      BANNED_OWNER,
    );
    const every = this.opts.sweepInterval ?? 1000;
    this.timer = setInterval(() => void this.sweep().catch(() => undefined), every);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.broker.hooks.removeOwner(BANNED_OWNER);
    await this.mirror.stop();
  }

  private active(b: BanRecord): boolean {
    return b.until * 1000 > this.now();
  }

  /** The ban that applies to `client`, if any. */
  banOf(client: ClientInfo): BanRecord | undefined {
    const check = (as: BanKind, who: string | undefined): BanRecord | undefined => {
      if (who === undefined) return undefined;
      const b = this.mirror.get(idOf(as, who));
      return b !== undefined && this.active(b) ? b : undefined;
    };
    return (
      check("clientid", client.clientId) ??
      check("username", client.username) ??
      check("peerhost", canonicalHost(client.peerHost))
    );
  }

  private refuses(client: ClientInfo): boolean {
    if (this.mirror.size === 0 || !this.opts.enabled(client.zone)) return false;
    const b = this.banOf(client);
    if (b !== undefined)
      this.opts.logger.info({ clientid: client.clientId, as: b.as, who: b.who }, "banned client refused");
    return b !== undefined;
  }

  private matches(b: BanRecord, c: ClientInfo): boolean {
    switch (b.as) {
      case "clientid":
        return c.clientId === b.who;
      case "username":
        return c.username === b.who;
      case "peerhost":
        return canonicalHost(c.peerHost) === b.who;
    }
  }

  private kickMatching(b: BanRecord): void {
    const sessions = this.broker.sessions;
    const ids: string[] = [];
    for (const ch of sessions.liveChannels()) if (this.matches(b, ch.client)) ids.push(ch.client.clientId);
    for (const id of ids) {
      this.opts.logger.info({ clientid: id, as: b.as, who: b.who }, "banned client kicked");
      sessions.kick(id);
    }
  }

  /** Bans in force. */
  list(): BanRecord[] {
    return [...this.mirror.values()].filter((b) => this.active(b)).map((b) => ({ ...b }));
  }

  get(as: BanKind, who: string): BanRecord | undefined {
    const b = this.mirror.get(idOf(as, as === "peerhost" ? canonicalHost(who) : who));
    return b !== undefined && this.active(b) ? { ...b } : undefined;
  }

  /** Stores a ban (replacing one on the same who/as); matching clients are kicked. */
  async create(rec: BanRecord): Promise<BanRecord> {
    const b: BanRecord = { ...rec, who: rec.as === "peerhost" ? canonicalHost(rec.who) : rec.who };
    await this.store.put(this.keys.ban(b.as, b.who), encodeJson(b));
    this.mirror.apply(idOf(b.as, b.who), b);
    return b;
  }

  /** Deletes one ban; false when there was none (an expired one not yet swept counts as none). */
  async delete(as: BanKind, who: string): Promise<boolean> {
    const w = as === "peerhost" ? canonicalHost(who) : who;
    const existed = this.get(as, w) !== undefined;
    const deleted = await this.store.delete(this.keys.ban(as, w));
    this.mirror.apply(idOf(as, w), undefined);
    return deleted && existed;
  }

  /** Deletes the bans past their `until` from the store. */
  async sweep(): Promise<number> {
    let n = 0;
    for (const [id, b] of [...this.mirror.entries()]) {
      if (this.active(b)) continue;
      const key = this.keys.ban(b.as, b.who);
      const e = await this.store.get(key);
      let current: BanRecord | undefined;
      try {
        current = e === undefined ? undefined : decodeBan(e.value);
      } catch {
        current = undefined;
      }
      if (e !== undefined && (current === undefined || !this.active(current))) {
        const done = await this.store.txn({
          compare: [{ key, target: "mod", op: "==", value: e.modRevision }],
          success: [{ type: "delete", key }],
        });
        if (done) n++;
      }
      // Re-created meanwhile: its put event brings it back into the mirror.
      if (current === undefined || !this.active(current)) this.mirror.apply(id, undefined);
    }
    return n;
  }
}
