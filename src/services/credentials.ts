// Secrets of management applications and dashboard users: bcrypt hashes of their SHA-256 digest
// (never the secret itself), a check that costs the same whether or not the id exists, and a short cache of
// successful checks so that every API request does not pay a bcrypt round. The cache keys are
// SHA-256 digests of `id:secret`, never the secret; any change to the records clears it, and an
// entry lives CACHE_TTL at most (so a change made on another node applies within that time).

import { createHash } from "node:crypto";
import { compare, hash } from "bcryptjs";
import type { AppService } from "./apps.ts";
import type { RecordStore } from "./records.ts";
import type { UserService } from "./users.ts";

export const CACHE_TTL = 30_000;
export const DEFAULT_ROUNDS = 10;

export class SecretHasher {
  private readonly cache = new Map<string, number>();
  private dummy: Promise<string> | undefined;

  constructor(readonly rounds = DEFAULT_ROUNDS) {}

  hash(secret: string): Promise<string> {
    return hash(prehash(secret), this.rounds);
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
): Promise<string[]> {
  const done = (await meta.get("setup")) !== undefined;
  await apps.bootstrap(done, d.appId, d.appSecret);
  await users.bootstrap(done, d.userPassword);
  if (!done) await meta.put("setup", { created_at: Date.now() });
  const warnings: string[] = [];
  if (await apps.verify(WELL_KNOWN.id, WELL_KNOWN.secret))
    warnings.push("management application admin/public still has its default secret: change it");
  if (await users.verify(WELL_KNOWN.id, WELL_KNOWN.secret))
    warnings.push("dashboard user admin/public still has its default password: change it");
  return warnings;
}
