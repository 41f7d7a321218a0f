// Password hashing (emqx-facts §5): every hash option of the database providers against values
// computed independently here, the salted forms, pbkdf2, bcrypt, and the clientid/username stored
// form (4 random salt bytes + hash(salt || password)).

import { createHash, pbkdf2Sync } from "node:crypto";
import { hash as bcryptHash, genSalt } from "bcryptjs";
import { describe, expect, it } from "vitest";
import {
  checkPassword,
  checkStored,
  hashPassword,
  makeStored,
  parseHashSpec,
  SALT_BYTES,
  STORED_HASHES,
} from "../../src/auth/password-hash.ts";

const hex = (algo: string, s: string | Buffer) => createHash(algo).update(s).digest("hex");

describe("password hash options", () => {
  const pw = "pässword";

  it.each([
    ["plain", pw],
    ["md5", hex("md5", pw)],
    ["sha", hex("sha1", pw)],
    ["sha256", hex("sha256", pw)],
    ["sha512", hex("sha512", pw)],
  ])("%s compares the lower-case hex digest (or the text for plain)", async (algo, stored) => {
    const spec = parseHashSpec(algo);
    expect(checkPassword(spec, stored, pw)).toBe(true);
    expect(checkPassword(spec, stored, "wrong")).toBe(false);
    if (algo !== "plain") expect(checkPassword(spec, stored.toUpperCase(), pw)).toBe(true);
    expect(await hashPassword(spec, pw)).toBe(stored);
  });

  it("salt,<hash> puts the salt before the password, <hash>,salt after it", async () => {
    const salt = "s4lt";
    const prefix = parseHashSpec("salt,sha256");
    const suffix = parseHashSpec("sha256,salt");
    expect(checkPassword(prefix, hex("sha256", salt + pw), pw, salt)).toBe(true);
    expect(checkPassword(prefix, hex("sha256", pw + salt), pw, salt)).toBe(false);
    expect(checkPassword(suffix, hex("sha256", pw + salt), pw, salt)).toBe(true);
    expect(checkPassword(parseHashSpec("salt,md5"), hex("md5", salt + pw), pw, salt)).toBe(true);
    expect(checkPassword(parseHashSpec("plain,salt"), pw + salt, pw, salt)).toBe(true);
    expect(await hashPassword(prefix, pw, salt)).toBe(hex("sha256", salt + pw));
  });

  it("bcrypt checks a bcrypt hash; salt,bcrypt hashes with the stored bcrypt salt", async () => {
    const stored = await bcryptHash(pw, 4);
    await expect(checkPassword(parseHashSpec("bcrypt"), stored, pw)).resolves.toBe(true);
    await expect(checkPassword(parseHashSpec("bcrypt"), stored, "nope")).resolves.toBe(false);
    await expect(checkPassword(parseHashSpec("bcrypt"), "not-a-hash", pw)).resolves.toBe(false);
    const salt = await genSalt(4);
    const salted = await bcryptHash(pw, salt);
    await expect(checkPassword(parseHashSpec("salt,bcrypt"), salted, pw, salt)).resolves.toBe(true);
    await expect(checkPassword(parseHashSpec("salt,bcrypt"), salted, "nope", salt)).resolves.toBe(false);
  });

  it("pbkdf2,<mac>,<iterations>,<dklen> compares the hex derived key", async () => {
    const salt = "NaCl";
    const stored = pbkdf2Sync(pw, salt, 1000, 20, "sha256").toString("hex");
    const spec = parseHashSpec("pbkdf2,sha256,1000,20");
    expect(checkPassword(spec, stored, pw, salt)).toBe(true);
    expect(checkPassword(spec, stored, pw, "other")).toBe(false);
    const sha1 = pbkdf2Sync(pw, salt, 10, 32, "sha1").toString("hex");
    expect(checkPassword(parseHashSpec("pbkdf2,sha,10,32"), sha1, pw, salt)).toBe(true);
    expect(await hashPassword(spec, pw, salt)).toBe(stored);
  });

  it("refuses unknown forms with a message", () => {
    for (const bad of ["sha3", "salt,salt", "pbkdf2,sha256,x,20", "pbkdf2,nomac,1,1", "a,b,c"])
      expect(() => parseHashSpec(bad), bad).toThrow(/invalid password hash/);
  });
});

describe("the clientid/username stored form", () => {
  it.each(STORED_HASHES)("%s: 4 salt bytes + hash(salt || password), fresh salt each time", async (h) => {
    const a = await makeStored(h, "secret", 4);
    const b = await makeStored(h, "secret", 4);
    expect(a.subarray(0, SALT_BYTES).equals(b.subarray(0, SALT_BYTES))).toBe(false);
    expect(await checkStored(h, a, "secret")).toBe(true);
    expect(await checkStored(h, a, Buffer.from("secret"))).toBe(true);
    expect(await checkStored(h, a, "Secret")).toBe(false);
    if (h === "sha256") {
      const salt = a.subarray(0, SALT_BYTES);
      const digest = hex("sha256", Buffer.concat([salt, Buffer.from("secret")]));
      expect(a.subarray(SALT_BYTES).toString()).toBe(digest);
    }
    if (h === "plain")
      expect(a.subarray(SALT_BYTES)).toEqual(Buffer.concat([a.subarray(0, SALT_BYTES), Buffer.from("secret")]));
  });

  it("a truncated stored value never matches", () => {
    expect(checkStored("sha256", Buffer.from([1, 2]), "")).toBe(false);
  });
});
