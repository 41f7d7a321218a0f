// svc_auth_ldap on a real node with real MQTT clients against a real OpenLDAP (slapd started by
// the test on a free loopback port, entries loaded with slapadd): allow with each stored password
// form, deny (4 / 0x86), a disabled entry (0x87), ignore-to-next for unknown users, user input
// escaped in the filter, superuser, ACL attributes (PUBACK / SUBACK 0x87 when nothing matches),
// bind_as_user, LDAPS (verify_peer), the directory stopped or frozen (CONNACK within the timeout, alarm raised,
// on_error both ways) and back on the same port (recovers without restart, alarm cleared), a bad
// configuration (file:line). The password forms are also checked as a unit, with hashes computed
// here with node:crypto.

import { createHash } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkLdapPassword } from "../../src/auth/ldap-password.ts";
import { escapeFilterValue, LDAP_ALARM } from "../../src/auth/ldap-provider.ts";
import { describeBackend } from "../helpers/backends/process.ts";
import {
  asBackend,
  findSlapd,
  SLAPD_ROOT_DN,
  SLAPD_ROOT_PW,
  SLAPD_SUFFIX,
  type SlapdServer,
} from "../helpers/backends/slapd.ts";
import { makePki, type Pki } from "../listeners/helpers.ts";
import { connackCode, connect, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";

const LDAP = "svc_auth_ldap";
const USERNAME = "svc_auth_username";
const DEVICES = `ou=device,${SLAPD_SUFFIX}`;
const TIMEOUT = 800;

function hashed(scheme: string, alg: string, password: string, salt?: Buffer): string {
  const h = createHash(alg).update(password);
  if (salt === undefined) return `{${scheme}}${h.digest("base64")}`;
  return `{${scheme}}${Buffer.concat([h.update(salt).digest(), salt]).toString("base64")}`;
}

describe("LDAP password forms", () => {
  const pw = Buffer.from("secret");
  const salt = Buffer.from("s4lt!");
  it.each([
    ["plain", "secret"],
    ["{CLEARTEXT}", "{CLEARTEXT}secret"],
    ["{SHA}", hashed("SHA", "sha1", "secret")],
    ["{SHA256}", hashed("SHA256", "sha256", "secret")],
    ["{SHA512}", hashed("SHA512", "sha512", "secret")],
    ["{MD5}", hashed("MD5", "md5", "secret")],
    ["{SSHA}", hashed("SSHA", "sha1", "secret", salt)],
    ["{SSHA256}", hashed("SSHA256", "sha256", "secret", salt)],
    ["{SMD5}", hashed("SMD5", "md5", "secret", salt)],
    ["{ssha} in lower case", hashed("ssha", "sha1", "secret", salt)],
  ])("%s", (_name, stored) => {
    expect(checkLdapPassword(stored, pw)).toBe(true);
    expect(checkLdapPassword(stored, Buffer.from("Secret"))).toBe(false);
  });

  it("{CRYPT} and unknown schemes are unsupported; salted values without a salt never match", () => {
    expect(checkLdapPassword("{CRYPT}abJnggxhB/yWI", pw)).toBe("unsupported");
    expect(checkLdapPassword("{ARGON2}x", pw)).toBe("unsupported");
    expect(checkLdapPassword(hashed("SSHA", "sha1", "secret"), pw)).toBe(false);
  });

  it("escapes filter values (RFC 4515)", () => {
    expect(escapeFilterValue("a*b(c)d\\e\0")).toBe("a\\2ab\\28c\\29d\\5ce\\00");
  });
});

function user(uidValue: string, attrs: Record<string, string | string[]>): string {
  const lines = [
    `dn: uid=${uidValue.replace(/([,+"\\<>;=#])/g, "\\$1")},${DEVICES}`,
    "objectClass: mqttDevice",
    "objectClass: mqttSecurity",
    "objectClass: mqttUser",
    `uid: ${uidValue}`,
  ];
  for (const [k, v] of Object.entries(attrs)) for (const x of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${x}`);
  return `${lines.join("\n")}\n`;
}

const ENTRIES = [
  `dn: ${DEVICES}\nobjectClass: organizationalUnit\nou: device\n`,
  user("alice", {
    userPassword: hashed("SSHA", "sha1", "alice-pw", Buffer.from("NaCl")),
    mqttPublishTopic: ["ok/#", "alice/+/x"],
    mqttSubscriptionTopic: "sub/+",
    mqttPubSubTopic: "both/#",
  }),
  user("admin", { userPassword: "admin-pw", isSuperuser: "TRUE" }),
  user("bob", { userPassword: hashed("SHA", "sha1", "bob-pw") }),
  user("carol", { userPassword: hashed("MD5", "md5", "carol-pw") }),
  user("dave", { userPassword: hashed("SHA256", "sha256", "dave-pw") }),
  user("off", { userPassword: "off-pw", isEnabled: "FALSE" }),
  user("crypt", { userPassword: "{CRYPT}abJnggxhB/yWI" }),
  user("nopw", {}),
  user("we(ird)*", { userPassword: "weird-pw" }),
].join("\n");

const slapd = findSlapd();

describeBackend("svc_auth_ldap against slapd", asBackend(slapd), () => {
  let dir: SlapdServer;
  let pki: Pki;
  beforeAll(async () => {
    if (!slapd.available) throw new Error("unreachable");
    pki = await makePki();
    dir = await slapd.start(ENTRIES, { cert: pki.server.cert, key: pki.server.key, ca: pki.ca.cert });
  }, 30_000);
  afterAll(async () => {
    await dir?.close();
  });

  const files = useTempDir();
  const aclFile = files.write("acl.conf", '{deny, {user, "nobody"}, pubsub, ["x"]}.\n');
  const node = useNode({
    allow_anonymous: "false",
    acl_nomatch: "deny",
    acl_file: aclFile,
    "plugins.etc_dir": files.dir,
  });

  function writeConf(extra: Record<string, string> = {}): void {
    const conf: Record<string, string> = {
      "auth.ldap.servers": "127.0.0.1",
      "auth.ldap.port": String(dir.port),
      "auth.ldap.pool": "2",
      "auth.ldap.bind_dn": SLAPD_ROOT_DN,
      "auth.ldap.bind_password": SLAPD_ROOT_PW,
      "auth.ldap.timeout": `${TIMEOUT}ms`,
      "auth.ldap.device_dn": DEVICES,
      ...extra,
    };
    files.write(
      `${LDAP}.conf`,
      `${Object.entries(conf)
        .map(([k, v]) => `${k} = ${v}`)
        .join("\n")}\n`,
    );
  }

  async function withLdap<T>(extra: Record<string, string>, body: () => Promise<T>): Promise<T> {
    writeConf(extra);
    await node().plugins.load(LDAP);
    try {
      return await body();
    } finally {
      await node().plugins.unload(LDAP);
    }
  }

  const code = (v: 4 | 5, username: string, password: string) =>
    connackCode(node(), v, { clientId: uid(), username, password });

  it("allows each stored password form, refuses a wrong one with 4 / 0x86, a disabled entry with 5 / 0x87", async () => {
    await withLdap({}, async () => {
      expect(await code(5, "alice", "alice-pw")).toBe(0);
      expect(await code(4, "alice", "alice-pw")).toBe(0);
      expect(await code(5, "bob", "bob-pw")).toBe(0);
      expect(await code(5, "carol", "carol-pw")).toBe(0);
      expect(await code(5, "dave", "dave-pw")).toBe(0);
      expect(await code(5, "admin", "admin-pw")).toBe(0);
      expect(await code(5, "alice", "wrong")).toBe(0x86);
      expect(await code(4, "alice", "wrong")).toBe(4);
      expect(await code(5, "crypt", "anything")).toBe(0x86);
      expect(await code(5, "off", "off-pw")).toBe(0x87);
      expect(await code(4, "off", "off-pw")).toBe(5);
    });
  });

  it("escapes the user name: `*` matches no one, `we(ird)*` only its own entry", async () => {
    await withLdap({}, async () => {
      // Unescaped, (uid=*) would match every entry (0x86 ambiguous): escaped, nobody -> anonymous.
      expect(await code(5, "*", "alice-pw")).toBe(0x87);
      expect(await code(5, "al*", "alice-pw")).toBe(0x87);
      expect(await code(5, "we(ird)*", "weird-pw")).toBe(0);
      expect(await code(5, "we(ird)*", "alice-pw")).toBe(0x86);
    });
  });

  it("unknown users and entries without a password go to the next provider, in start order", async () => {
    const n = node();
    await n.services.authUsername.add({ id: "local-user", password: "local-pw" });
    await n.services.authUsername.add({ id: "nopw", password: "local-pw" });
    await n.services.authUsername.add({ id: "alice", password: "local-pw" });
    await withLdap({}, async () => {
      await n.plugins.load(USERNAME);
      try {
        expect(await code(5, "local-user", "local-pw")).toBe(0);
        expect(await code(5, "nopw", "local-pw")).toBe(0);
        // LDAP is first: it decides for alice.
        expect(await code(5, "alice", "local-pw")).toBe(0x86);
        expect(await code(5, "nobody", "x")).toBe(0x87);
      } finally {
        await n.plugins.unload(USERNAME);
      }
    });
  });

  it("superuser skips the ACL; ACL attributes allow, anything else falls to acl_nomatch (0x87)", async () => {
    await withLdap({}, async () => {
      const a = await connect(node(), 5, { username: "alice", password: "alice-pw" });
      await a.c.publishAsync("ok/1", "x", { qos: 1 });
      await a.c.publishAsync("alice/7/x", "x", { qos: 1 });
      await a.c.publishAsync("both/1", "x", { qos: 1 });
      await expect(a.c.publishAsync("no/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      await expect(a.c.publishAsync("sub/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const err = await a.c
        .subscribeAsync({ "sub/a": { qos: 1 }, "both/b": { qos: 1 }, "ok/c": { qos: 1 } })
        .catch((e: { packet?: { granted?: number[] } }) => e);
      expect((err as { packet?: { granted?: number[] } }).packet?.granted).toEqual([1, 1, 0x87]);
      const admin = await connect(node(), 5, { username: "admin", password: "admin-pw" });
      await admin.c.publishAsync("no/1", "x", { qos: 1 });
    });
  });

  it("bind_as_user checks the password by binding as the entry", async () => {
    await withLdap({ "auth.ldap.bind_as_user": "true" }, async () => {
      expect(await code(5, "alice", "alice-pw")).toBe(0);
      expect(await code(5, "alice", "wrong")).toBe(0x86);
      expect(await code(5, "alice", "")).toBe(0x86);
      expect(await code(5, "admin", "admin-pw")).toBe(0);
    });
  });

  it("directory stopped: CONNACK within the timeout, alarm raised; back on its port: recovers", async () => {
    const n = node();
    await withLdap({}, async () => {
      expect(await code(5, "alice", "alice-pw")).toBe(0);
      await dir.stop();
      try {
        const t0 = Date.now();
        // on_error = ignore: nobody else decides, allow_anonymous = false refuses.
        expect(await code(5, "alice", "alice-pw")).toBe(0x87);
        expect(Date.now() - t0).toBeLessThan(TIMEOUT + 1000);
        expect(n.sys.alarms.isActive(LDAP_ALARM)).toBe(true);
      } finally {
        await dir.start();
      }
      expect(await code(5, "alice", "alice-pw")).toBe(0);
      expect(n.sys.alarms.isActive(LDAP_ALARM)).toBe(false);
    });
  });

  it("directory frozen: answered at the timeout; on_error = ignore passes to the next provider", async () => {
    const n = node();
    await n.services.authUsername.add({ id: "frozen-user", password: "local-pw" });
    await withLdap({}, async () => {
      await n.plugins.load(USERNAME);
      dir.pause();
      try {
        const t0 = Date.now();
        expect(await code(5, "frozen-user", "local-pw")).toBe(0);
        const took = Date.now() - t0;
        expect(took).toBeGreaterThanOrEqual(TIMEOUT - 50);
        expect(took).toBeLessThan(TIMEOUT + 1000);
        expect(n.sys.alarms.isActive(LDAP_ALARM)).toBe(true);
      } finally {
        dir.resume();
        await n.plugins.unload(USERNAME);
      }
      await waitUntil(async () => (await code(5, "alice", "alice-pw")) === 0, "LDAP answers again");
      expect(n.sys.alarms.isActive(LDAP_ALARM)).toBe(false);
    });
  });

  it("on_error = deny refuses while the directory is down, ACL included (not cached)", async () => {
    const n = node();
    await n.services.authUsername.add({ id: "deny-user", password: "local-pw" });
    await withLdap({ "auth.ldap.on_error": "deny" }, async () => {
      await n.plugins.load(USERNAME);
      try {
        const a = await connect(n, 5, { username: "alice", password: "alice-pw" });
        await dir.stop();
        try {
          const t0 = Date.now();
          // svc_auth_username knows deny-user, but LDAP (first) denies.
          expect(await code(5, "deny-user", "local-pw")).toBe(0x87);
          expect(Date.now() - t0).toBeLessThan(TIMEOUT + 1000);
          await expect(a.c.publishAsync("ok/down", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
        } finally {
          await dir.start();
        }
        await a.c.publishAsync("ok/down", "x", { qos: 1 });
        await waitUntil(() => !n.sys.alarms.isActive(LDAP_ALARM), "alarm cleared");
      } finally {
        await n.plugins.unload(USERNAME);
      }
    });
  });

  it("LDAPS: verify_peer with the directory's CA connects; with another CA the directory is down", async () => {
    const tls = {
      "auth.ldap.port": String(dir.tlsPort),
      "auth.ldap.ssl.enable": "true",
      "auth.ldap.ssl.verify": "verify_peer",
      "auth.ldap.ssl.server_name_indication": "localhost",
    };
    const ca = files.write("ldap-ca.pem", pki.ca.cert);
    await withLdap({ ...tls, "auth.ldap.ssl.cacertfile": ca }, async () => {
      expect(await code(5, "alice", "alice-pw")).toBe(0);
      expect(await code(5, "alice", "wrong")).toBe(0x86);
    });
    const other = files.write("other-ca.pem", pki.stranger.cert);
    await withLdap({ ...tls, "auth.ldap.ssl.cacertfile": other }, async () => {
      expect(await code(5, "alice", "alice-pw")).toBe(0x87);
      expect(node().sys.alarms.isActive(LDAP_ALARM)).toBe(true);
    });
    expect(node().sys.alarms.isActive(LDAP_ALARM)).toBe(false);
  });

  it("a bad configuration stops the load with file:line", async () => {
    files.write(`${LDAP}.conf`, "auth.ldap.pool = 0\nauth.ldap.username.attributetype = u id\nauth.ldap.nope = 1\n");
    const err = await node()
      .plugins.load(LDAP)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    const file = `${files.dir}/${LDAP}.conf`;
    expect(err?.issues?.[0]).toMatch(new RegExp(`^${file}:1: auth.ldap.pool`));
    expect(err?.issues?.[1]).toMatch(new RegExp(`^${file}:3: unknown key auth.ldap.nope`));
    expect(node().plugins.isActive(LDAP)).toBe(false);
  });
});
