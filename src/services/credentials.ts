// Secrets of management applications and dashboard users: bcrypt hashes of their SHA-256 digest
// (never the secret itself), a check that costs the same whether or not the id exists, and a short cache of
// successful checks so that every API request does not pay a bcrypt round. The cache keys are
// SHA-256 digests of `id:secret`, never the secret; any change to the records clears it, and an
// entry lives CACHE_TTL at most (so a change made on another node applies within that time).
// Start-up's check of the well-known defaults remembers, per stored hash, whether it is a hash of
// the well-known secret, with the setup marker: a restart pays no bcrypt round for it.

import { createHash } from "node:crypto";
import { compare, hash } from "bcryptjs";
import type { AppService } from "./apps.ts";
import type { RecordStore } from "./records.ts";
import type { UserService } from "./users.ts";

export const CACHE_TTL = 30_000;
export const DEFAULT_ROUNDS = 10;
/** Verdicts on stored hashes kept with the setup marker (the latest ones). */
const WELL_KNOWN_KEPT = 8;

export class SecretHasher {
  private readonly cache = new Map<string, number>();
  private dummy: Promise<string> | undefined;
  /**
   * Stored hash -> whether it is a hash of the well-known secret. Only start-up's check reads it
   * (request checks always pay their round, whatever the id). What it tells is no secret: anyone
   * holding a hash can try the well-known secret on it.
   */
  private readonly wellKnown = new Map<string, boolean>();
  /** bcrypt comparisons made (for tests and diagnostics). */
  compares = 0;

  constructor(readonly rounds = DEFAULT_ROUNDS) {}

  async hash(secret: string): Promise<string> {
    const h = await hash(prehash(secret), this.rounds);
    if (secret === WELL_KNOWN.secret) this.wellKnown.set(h, true);
    return h;
  }

  /** Whether `stored` is a hash of the well-known secret (remembered per hash). */
  async isWellKnown(stored: string): Promise<boolean> {
    const known = this.wellKnown.get(stored);
    if (known !== undefined) return known;
    this.compares++;
    const ok = await compare(prehash(WELL_KNOWN.secret), stored);
    this.wellKnown.set(stored, ok);
    return ok;
  }

  /** The verdicts of isWellKnown to keep (the latest WELL_KNOWN_KEPT). */
  wellKnownVerdicts(): Record<string, boolean> {
    return Object.fromEntries([...this.wellKnown].slice(-WELL_KNOWN_KEPT));
  }

  /** Verdicts kept by an earlier start. */
  learnWellKnown(verdicts: Record<string, boolean> | undefined): void {
    for (const [h, v] of Object.entries(verdicts ?? {})) if (typeof v === "boolean") this.wellKnown.set(h, v);
  }

  /** Compares `secret` with `stored` (undefined = unknown id: compared with a dummy hash). */
  async verify(id: string, secret: string, stored: string | undefined): Promise<boolean> {
    const key = digest(id, secret);
    const until = this.cache.get(key);
    if (until !== undefined && stored !== undefined) {
      if (until > Date.now()) return true;
      this.cache.delete(key);
    }
    this.dummy ??= this.hash("svc-no-such-id");
    this.compares++;
    const ok = await compare(prehash(secret), stored ?? (await this.dummy));
    if (ok && stored !== undefined) {
      if (this.cache.size > 1000) this.cache.clear();
      this.cache.set(key, Date.now() + CACHE_TTL);
      return true;
    }
    return false;
  }

  forget(): void {
    this.cache.clear();
  }
}

/** bcrypt reads 72 bytes at most: a SHA-256 digest first makes every byte of a secret count. */
function prehash(secret: string): string {
  return createHash("sha256").update(secret).digest("base64");
}

function digest(id: string, secret: string): string {
  return createHash("sha256").update(id).update("\0").update(secret).digest("hex");
}

/** The well-known defaults (`admin`/`public`) whose use start-up warns about. */
export const WELL_KNOWN = { id: "admin", secret: "public" } as const;

export interface CredentialDefaults {
  appId: string;
  appSecret: string;
  userPassword: string;
}

/** Marker that the first start's default application and user were created. */
export interface SetupMarker {
  created_at: number;
  /** Stored hash -> whether it is a hash of the well-known secret (SecretHasher.isWellKnown). */
  well_known?: Record<string, boolean>;
}

/**
 * First start: creates the default application and dashboard user (never again once the marker
 * exists, so deleting them sticks). Returns a warning per well-known pair still accepted.
 */
export async function setUpCredentials(
  apps: AppService,
  users: UserService,
  meta: RecordStore<SetupMarker>,
  d: CredentialDefaults,
  hasher: SecretHasher,
): Promise<string[]> {
  const marker = await meta.get("setup");
  hasher.learnWellKnown(marker?.well_known);
  await apps.bootstrap(marker !== undefined, d.appId, d.appSecret);
  await users.bootstrap(marker !== undefined, d.userPassword);
  const warnings: string[] = [];
  if (await apps.wellKnownInUse(WELL_KNOWN.id))
    warnings.push("management application admin/public still has its default secret: change it");
  if (await users.wellKnownInUse(WELL_KNOWN.id))
    warnings.push("dashboard user admin/public still has its default password: change it");
  const well_known = hasher.wellKnownVerdicts();
  if (marker === undefined || JSON.stringify(well_known) !== JSON.stringify(marker.well_known ?? {}))
    await meta.put("setup", { created_at: marker?.created_at ?? Date.now(), well_known });
  return warnings;
}
