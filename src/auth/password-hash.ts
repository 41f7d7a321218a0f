// Password hashing of the authentication providers (emqx-facts §5): `plain`, `md5`, `sha`,
// `sha256`, `sha512` (lower-case hex digests), `bcrypt`, the salted forms `salt,<h>` (salt before
// the password) and `<h>,salt` (after it), `salt,bcrypt` (a bcrypt salt string), and
// `pbkdf2,<mac>,<iterations>,<dklen>` (hex). Database providers compare a stored hash (and salt
// column) with what a client sent; the clientid/username providers keep their own stored form,
// 4 random salt bytes followed by hash(salt || password), as the family does.

import { createHash, pbkdf2Sync, randomBytes, timingSafeEqual } from "node:crypto";
import { compare as bcryptCompare, hash as bcryptHash } from "bcryptjs";

/** Digests (and `plain`) that the salted forms can wrap. */
export const DIGESTS = ["plain", "md5", "sha", "sha256", "sha512"] as const;
export type Digest = (typeof DIGESTS)[number];

/** Algorithms of the clientid/username stored form (`auth.client.password_hash`...). */
export const STORED_HASHES = [...DIGESTS, "bcrypt"] as const;
export type StoredHash = (typeof STORED_HASHES)[number];

const PBKDF2_MACS: Readonly<Record<string, string>> = {
  md4: "md4",
  md5: "md5",
  ripemd160: "ripemd160",
  sha: "sha1",
  sha224: "sha224",
  sha256: "sha256",
  sha384: "sha384",
  sha512: "sha512",
};

export type HashSpec =
  | { kind: "digest"; digest: Digest; salt: "none" | "prefix" | "suffix" }
  | { kind: "bcrypt"; salted: boolean }
  | { kind: "pbkdf2"; mac: string; iterations: number; dklen: number };

/** Parses a `password_hash` setting; throws an Error naming what is wrong. */
export function parseHashSpec(text: string): HashSpec {
  const parts = text
    .split(",")
    .map((p) => p.trim().toLowerCase())
    .filter((p) => p !== "");
  const isDigest = (p: string): p is Digest => (DIGESTS as readonly string[]).includes(p);
  const bad = (why: string) => new Error(`invalid password hash "${text}": ${why}`);
  if (parts.length === 1) {
    if (parts[0] === "bcrypt") return { kind: "bcrypt", salted: false };
    if (isDigest(parts[0])) return { kind: "digest", digest: parts[0], salt: "none" };
    throw bad(`expected one of ${[...DIGESTS, "bcrypt"].join(", ")}, salt,<hash>, <hash>,salt or pbkdf2,...`);
  }
  if (parts.length === 2) {
    const [a, b] = parts;
    if ((a === "salt" && b === "bcrypt") || (a === "bcrypt" && b === "salt")) return { kind: "bcrypt", salted: true };
    if (a === "salt" && isDigest(b)) return { kind: "digest", digest: b, salt: "prefix" };
    if (b === "salt" && isDigest(a)) return { kind: "digest", digest: a, salt: "suffix" };
    throw bad("a salted form is salt,<hash> or <hash>,salt");
  }
  if (parts[0] === "pbkdf2" && parts.length === 4) {
    const mac = PBKDF2_MACS[parts[1]];
    const iterations = Number(parts[2]);
    const dklen = Number(parts[3]);
    if (mac === undefined) throw bad(`unknown pbkdf2 mac "${parts[1]}"`);
    if (!Number.isSafeInteger(iterations) || iterations < 1) throw bad("pbkdf2 iterations must be a positive integer");
    if (!Number.isSafeInteger(dklen) || dklen < 1) throw bad("pbkdf2 dklen must be a positive integer");
    return { kind: "pbkdf2", mac, iterations, dklen };
  }
  throw bad("expected pbkdf2,<mac>,<iterations>,<dklen>");
}

/** The digest of `data` as the family writes it: lower-case hex, or the bytes as text for plain. */
export function digestText(digest: Digest, data: Buffer): string {
  switch (digest) {
    case "plain":
      return data.toString("utf8");
    case "sha":
      return createHash("sha1").update(data).digest("hex");
    default:
      return createHash(digest).update(data).digest("hex");
  }
}

/** digestText as bytes; `plain` keeps the bytes as they are (salt bytes are not text). */
function digestBytes(digest: Digest, data: Buffer): Buffer {
  return digest === "plain" ? data : Buffer.from(digestText(digest, data), "utf8");
}

function toBuffer(v: string | Buffer): Buffer {
  return typeof v === "string" ? Buffer.from(v, "utf8") : v;
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a, "utf8");
  const y = Buffer.from(b, "utf8");
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Checks `password` against a stored hash (and its salt, for the salted forms). Digests compare as
 * lower-case hex; a promise only for the bcrypt forms.
 */
export function checkPassword(
  spec: HashSpec,
  stored: string,
  password: string | Buffer,
  salt = "",
): boolean | Promise<boolean> {
  const pw = toBuffer(password);
  switch (spec.kind) {
    case "digest": {
      const data =
        spec.salt === "prefix"
          ? Buffer.concat([Buffer.from(salt), pw])
          : spec.salt === "suffix"
            ? Buffer.concat([pw, Buffer.from(salt)])
            : pw;
      const want = spec.digest === "plain" ? stored : stored.toLowerCase();
      return sameText(digestText(spec.digest, data), want);
    }
    case "bcrypt":
      if (!spec.salted) return bcryptCompare(pw.toString("utf8"), stored).catch(() => false);
      return bcryptHash(pw.toString("utf8"), salt)
        .then((h) => sameText(h, stored))
        .catch(() => false);
    case "pbkdf2": {
      const dk = pbkdf2Sync(pw, Buffer.from(salt), spec.iterations, spec.dklen, spec.mac).toString("hex");
      return sameText(dk, stored.toLowerCase());
    }
  }
}

/** Hashes `password` with `spec` (the inverse of checkPassword, for tests and tools). */
export async function hashPassword(spec: HashSpec, password: string | Buffer, salt = "", rounds = 10): Promise<string> {
  const pw = toBuffer(password);
  switch (spec.kind) {
    case "digest": {
      const data =
        spec.salt === "prefix"
          ? Buffer.concat([Buffer.from(salt), pw])
          : spec.salt === "suffix"
            ? Buffer.concat([pw, Buffer.from(salt)])
            : pw;
      return digestText(spec.digest, data);
    }
    case "bcrypt":
      return bcryptHash(pw.toString("utf8"), spec.salted ? salt : rounds);
    case "pbkdf2":
      return pbkdf2Sync(pw, Buffer.from(salt), spec.iterations, spec.dklen, spec.mac).toString("hex");
  }
}

// ---- the clientid/username stored form ----------------------------------------------------------

/** Length of the random salt in front of a stored hash. */
export const SALT_BYTES = 4;

/** bcryptjs hashes strings: salt||password bytes become one latin1 character per byte. */
function bcryptInput(data: Buffer): string {
  return data.toString("latin1");
}

/** `salt || hash(salt || password)` with a fresh 4-byte salt. */
export async function makeStored(hash: StoredHash, password: string | Buffer, rounds = 10): Promise<Buffer> {
  const salt = randomBytes(SALT_BYTES);
  const data = Buffer.concat([salt, toBuffer(password)]);
  const hashed =
    hash === "bcrypt" ? Buffer.from(await bcryptHash(bcryptInput(data), rounds), "utf8") : digestBytes(hash, data);
  return Buffer.concat([salt, hashed]);
}

/** Checks `password` against a stored form; synchronous except for bcrypt. */
export function checkStored(hash: StoredHash, stored: Buffer, password: string | Buffer): boolean | Promise<boolean> {
  if (stored.length < SALT_BYTES) return false;
  const salt = stored.subarray(0, SALT_BYTES);
  const want = stored.subarray(SALT_BYTES);
  const data = Buffer.concat([salt, toBuffer(password)]);
  if (hash === "bcrypt") return bcryptCompare(bcryptInput(data), want.toString("utf8")).catch(() => false);
  const got = digestBytes(hash, data);
  return got.length === want.length && timingSafeEqual(got, want);
}
