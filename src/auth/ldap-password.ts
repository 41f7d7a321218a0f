// Password values as LDAP directories store them (RFC 2307 `{SCHEME}base64`), checked the way
// svc_auth_ldap's family did: a value without a scheme is the plain password; `{SHA}`, `{SHA256}`,
// `{SHA384}`, `{SHA512}`, `{MD5}` are base64(hash(password)); the salted forms `{SSHA}`,
// `{SSHA256}`, `{SSHA384}`, `{SSHA512}`, `{SMD5}` are base64(hash(password + salt) + salt);
// `{CLEARTEXT}` is plain. `{CRYPT}` and other schemes cannot be checked here (Node has no crypt(3)):
// "unsupported", which the provider refuses with a log line naming the scheme.

import { createHash, timingSafeEqual } from "node:crypto";

const DIGESTS: Record<string, { alg: string; salted: boolean }> = {
  SHA: { alg: "sha1", salted: false },
  SHA256: { alg: "sha256", salted: false },
  SHA384: { alg: "sha384", salted: false },
  SHA512: { alg: "sha512", salted: false },
  MD5: { alg: "md5", salted: false },
  SSHA: { alg: "sha1", salted: true },
  SSHA256: { alg: "sha256", salted: true },
  SSHA384: { alg: "sha384", salted: true },
  SSHA512: { alg: "sha512", salted: true },
  SMD5: { alg: "md5", salted: true },
};

function same(a: Buffer, b: Buffer): boolean {
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The scheme of a stored value (`SSHA`...), or undefined for a plain one. */
export function schemeOf(stored: string): string | undefined {
  const m = /^\{([A-Za-z0-9._-]+)\}/.exec(stored);
  return m === null ? undefined : m[1].toUpperCase();
}

/** Whether `password` matches the directory's `stored` value. */
export function checkLdapPassword(stored: string, password: Buffer): boolean | "unsupported" {
  const scheme = schemeOf(stored);
  if (scheme === undefined) return same(Buffer.from(stored, "utf8"), password);
  const rest = stored.slice(scheme.length + 2);
  if (scheme === "CLEARTEXT") return same(Buffer.from(rest, "utf8"), password);
  const d = DIGESTS[scheme];
  if (d === undefined) return "unsupported";
  const raw = Buffer.from(rest, "base64");
  const size = createHash(d.alg).digest().length;
  if (!d.salted) return same(raw, createHash(d.alg).update(password).digest());
  if (raw.length <= size) return false;
  const salt = raw.subarray(size);
  return same(raw.subarray(0, size), createHash(d.alg).update(password).update(salt).digest());
}
