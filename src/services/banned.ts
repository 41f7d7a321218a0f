// Bans for the API and CLI (spec 000 §4 "Ban records", emqx-facts §3.3): list the bans in force,
// create one (defaults `by` "user", `at` now, `until` now + 300 s, as the family's API), delete one
// by `as` and `who`, or every kind of ban on a `who` (the catalogue's 3.x `/banned/{who}`). The
// bans themselves (store, mirror, CONNECT check, kick, expiry) are the auth feature's.

import { isIP } from "node:net";
import { BAN_KINDS, type BanKind, type BanRecord, type Bans, isBanKind } from "../auth/banned.ts";

export type { BanKind, BanRecord };
export { BAN_KINDS };

/** Seconds a ban lasts when `until` is not given. */
export const DEFAULT_BAN_SECONDS = 300;

export interface NewBan {
  who: string;
  as: string;
  by?: string;
  reason?: string;
  /** Seconds since the epoch. */
  at?: number;
  until?: number;
}

export type BanOutcome = { ban: BanRecord } | { error: "bad_as" | "bad_peerhost" };

export class BannedService {
  constructor(
    private readonly bans: Bans,
    private readonly now: () => number = Date.now,
  ) {}

  /** Bans in force. */
  list(): BanRecord[] {
    return this.bans.list();
  }

  async create(b: NewBan): Promise<BanOutcome> {
    if (!isBanKind(b.as)) return { error: "bad_as" };
    if (b.as === "peerhost" && isIP(b.who) === 0) return { error: "bad_peerhost" };
    const at = b.at ?? Math.floor(this.now() / 1000);
    const ban = await this.bans.create({
      who: b.who,
      as: b.as,
      by: b.by ?? "user",
      reason: b.reason ?? "",
      at,
      until: b.until ?? Math.floor(this.now() / 1000) + DEFAULT_BAN_SECONDS,
    });
    return { ban };
  }

  /** Deletes the ban of `who` as `as`; "bad_as" for an unknown kind, false when there is none. */
  async delete(as: string, who: string): Promise<boolean | "bad_as"> {
    if (!isBanKind(as)) return "bad_as";
    return this.bans.delete(as, who);
  }

  /** Deletes the bans of `who` of every kind (or of `as` when given); how many there were. */
  async deleteWho(who: string, as?: string): Promise<number | "bad_as"> {
    if (as !== undefined && !isBanKind(as)) return "bad_as";
    const kinds: readonly BanKind[] = as === undefined ? BAN_KINDS : [as as BanKind];
    let n = 0;
    for (const k of kinds) if (await this.bans.delete(k, who)) n++;
    return n;
  }
}
