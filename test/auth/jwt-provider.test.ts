// svc_auth_jwt on a real node with real clients: HS256 with the secret, RS256 with a PEM public
// key generated here, ES256 from a JWKS served by the test (kid lookup, refresh), exp / nbf, a bad
// signature, claim checks with %u / %c, a token that is not a JWT passed to the next provider, the
// superuser claim and ACL claims (PUBACK / SUBACK 0x87).

import { createHmac, generateKeyPairSync, type KeyObject, sign } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connackCode, connect, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";
import { TestHttpServer } from "./http-server.ts";

const JWT = "svc_auth_jwt";
const CLIENTID = "svc_auth_clientid";
const SECRET = "s3cret-for-tests";

const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString("base64url");
const now = () => Math.floor(Date.now() / 1000);

function hs256(claims: object, secret = SECRET): string {
  const data = `${b64({ alg: "HS256", typ: "JWT" })}.${b64(claims)}`;
  return `${data}.${createHmac("sha256", secret).update(data).digest("base64url")}`;
}

function signed(alg: "RS256" | "ES256", key: KeyObject, claims: object, kid?: string): string {
  const data = `${b64({ alg, typ: "JWT", ...(kid === undefined ? {} : { kid }) })}.${b64(claims)}`;
  const sig =
    alg === "ES256"
      ? sign("sha256", Buffer.from(data), { key, dsaEncoding: "ieee-p1363" })
      : sign("sha256", Buffer.from(data), key);
  return `${data}.${sig.toString("base64url")}`;
}

const rsa = generateKeyPairSync("rsa", { modulusLength: 2048 });
const ec1 = generateKeyPairSync("ec", { namedCurve: "P-256" });
const ec2 = generateKeyPairSync("ec", { namedCurve: "P-256" });

const server = new TestHttpServer();
let jwks: object[] = [{ ...ec1.publicKey.export({ format: "jwk" }), kid: "k1", use: "sig" }];
server.handle = (r) =>
  r.path === "/jwks"
    ? { status: 200, type: "application/json", body: JSON.stringify({ keys: jwks }) }
    : { status: 404 };
beforeAll(() => server.start());
afterAll(() => server.stop());

const files = useTempDir();
const pubkeyFile = files.write("jwt_public_key.pem", rsa.publicKey.export({ type: "spki", format: "pem" }) as string);
const node = useNode({ allow_anonymous: "false", "plugins.etc_dir": files.dir });

async function withJwt<T>(conf: Record<string, string>, body: () => Promise<T>): Promise<T> {
  files.write(
    `${JWT}.conf`,
    `${Object.entries(conf)
      .map(([k, v]) => `${k} = ${v}`)
      .join("\n")}\n`,
  );
  await node().plugins.load(JWT);
  try {
    return await body();
  } finally {
    await node().plugins.unload(JWT);
  }
}

const pw = (token: string) => ({ clientId: uid(), username: "alice", password: token });

describe("svc_auth_jwt", () => {
  it("HS256: allows a valid token; bad signature, exp and nbf refused (5 / 0x87)", async () => {
    await withJwt({ "auth.jwt.secret": SECRET }, async () => {
      const n = node();
      expect(await connackCode(n, 5, pw(hs256({ sub: "alice", exp: now() + 60 })))).toBe(0);
      expect(await connackCode(n, 4, pw(hs256({ sub: "alice" })))).toBe(0);
      expect(await connackCode(n, 5, pw(hs256({ sub: "alice" }, "other-secret")))).toBe(0x87);
      expect(await connackCode(n, 4, pw(hs256({ sub: "alice" }, "other-secret")))).toBe(5);
      expect(await connackCode(n, 5, pw(hs256({ sub: "alice", exp: now() - 1 })))).toBe(0x87);
      expect(await connackCode(n, 5, pw(hs256({ sub: "alice", nbf: now() + 60 })))).toBe(0x87);
      // A token signed with a key kind not configured (RS256, no public key): ignored.
      expect(await connackCode(n, 5, pw(signed("RS256", rsa.privateKey, {})))).toBe(0x87);
    });
  });

  it("from = username; a value that is not a JWT goes to the next provider", async () => {
    const n = node();
    await n.services.authClientid.add({ id: "dev-jwt", password: "client-pw" });
    await withJwt({ "auth.jwt.secret": SECRET, "auth.jwt.from": "username" }, async () => {
      await n.plugins.load(CLIENTID);
      try {
        expect(await connackCode(n, 5, { clientId: uid(), username: hs256({}), password: "x" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "dev-jwt", username: "plain", password: "client-pw" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "dev-jwt", username: "plain", password: "no" })).toBe(0x86);
        expect(
          await connackCode(n, 5, { clientId: "dev-jwt", username: hs256({ exp: 1 }), password: "client-pw" }),
        ).toBe(0x87);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });

  it("verify_claims with %u and %c", async () => {
    const conf = {
      "auth.jwt.secret": SECRET,
      "auth.jwt.verify_claims": "on",
      "auth.jwt.verify_claims.username": "%u",
      "auth.jwt.verify_claims.clientid": "%c",
      "auth.jwt.verify_claims.iss": "svc",
    };
    await withJwt(conf, async () => {
      const n = node();
      const id = uid();
      const ok = { username: "alice", clientid: id, iss: "svc" };
      expect(await connackCode(n, 5, { clientId: id, username: "alice", password: hs256(ok) })).toBe(0);
      expect(await connackCode(n, 5, { clientId: id, username: "bob", password: hs256(ok) })).toBe(0x87);
      expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: hs256(ok) })).toBe(0x87);
      expect(await connackCode(n, 5, { clientId: id, username: "alice", password: hs256({ ...ok, iss: "x" }) })).toBe(
        0x87,
      );
    });
  });

  it("RS256 with a PEM public key; superuser claim and ACL claims", async () => {
    const conf = { "auth.jwt.pubkey": pubkeyFile, "auth.jwt.superuser_claim_name": "is_superuser" };
    await withJwt(conf, async () => {
      const n = node();
      const acl = { pub: ["t/%u/#"], sub: ["s/#"], all: ["both/%c"] };
      const id = uid();
      const token = signed("RS256", rsa.privateKey, { exp: now() + 60, acl });
      const c = await connect(n, 5, { clientId: id, username: "alice", password: token });
      await c.c.publishAsync("t/alice/1", "x", { qos: 1 });
      await c.c.publishAsync(`both/${id}`, "x", { qos: 1 });
      await expect(c.c.publishAsync("t/bob/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      await expect(c.c.publishAsync("s/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const err = await c.c
        .subscribeAsync({ "s/a": { qos: 1 }, "t/alice/x": { qos: 1 }, [`both/${id}`]: { qos: 1 } })
        .catch((e: { packet?: { granted?: number[] } }) => e);
      expect((err as { packet?: { granted?: number[] } }).packet?.granted).toEqual([1, 0x87, 1]);
      // A superuser skips the ACL.
      const su = await connect(n, 5, {
        username: "root",
        password: signed("RS256", rsa.privateKey, { is_superuser: true, acl: { pub: [] } }),
      });
      await su.c.publishAsync("anything/1", "x", { qos: 1 });
      // A forged signature is refused; an HS256 token with no secret configured is ignored.
      const forged = `${token.slice(0, token.lastIndexOf("."))}.${Buffer.from("nope").toString("base64url")}`;
      expect(await connackCode(n, 5, pw(forged))).toBe(0x87);
      expect(await connackCode(n, 5, pw(hs256({})))).toBe(0x87);
    });
  });

  it("ES256 from a JWKS served by the test: kid lookup, refreshed every refresh_interval", async () => {
    jwks = [{ ...ec1.publicKey.export({ format: "jwk" }), kid: "k1", use: "sig" }];
    const conf = { "auth.jwt.jwks": `${server.base}/jwks`, "auth.jwt.jwks.refresh_interval": "1s" };
    await withJwt(conf, async () => {
      const n = node();
      expect(await connackCode(n, 5, pw(signed("ES256", ec1.privateKey, {}, "k1")))).toBe(0);
      expect(await connackCode(n, 5, pw(signed("ES256", ec1.privateKey, { exp: now() - 5 }, "k1")))).toBe(0x87);
      expect(await connackCode(n, 5, pw(signed("ES256", ec2.privateKey, {}, "k1")))).toBe(0x87);
      // Unknown kid: no key fits, ignored (nobody else decides: 0x87 too).
      expect(await connackCode(n, 5, pw(signed("ES256", ec2.privateKey, {}, "k2")))).toBe(0x87);
      // The key set rotates: k2 is found after a refresh.
      jwks = [{ ...ec2.publicKey.export({ format: "jwk" }), kid: "k2" }];
      const seen = server.seen.length;
      await waitUntil(() => server.seen.length > seen, "JWKS refresh", 5000);
      await new Promise((r) => setTimeout(r, 100));
      expect(await connackCode(n, 5, pw(signed("ES256", ec2.privateKey, {}, "k2")))).toBe(0);
      expect(await connackCode(n, 5, pw(signed("ES256", ec1.privateKey, {}, "k1")))).toBe(0x87);
    });
  });

  it("needs a key source; a missing pubkey file is named with file:line", async () => {
    files.write(`${JWT}.conf`, "auth.jwt.from = password\n");
    await expect(node().plugins.load(JWT)).rejects.toThrow(/one of auth.jwt.secret, auth.jwt.pubkey or auth.jwt.jwks/);
    files.write(`${JWT}.conf`, "auth.jwt.pubkey = /nonexistent/key.pem\n");
    await expect(node().plugins.load(JWT)).rejects.toThrow(`${files.dir}/${JWT}.conf:1: auth.jwt.pubkey`);
    expect(node().plugins.isActive(JWT)).toBe(false);
  });
});
