// The authentication chain on a real node with real clients: allow_anonymous both ways, the
// CONNACK codes of a refusal (3.1.1: 4 bad user name or password, 5 not authorized; 5.0: 0x86,
// 0x87), svc_auth_clientid and svc_auth_username (metrics, every stored hash, the hash setting),
// chain order = start order, ignore-to-next, unloading, and preloads from the plugins' files.

import { describe, expect, it } from "vitest";
import { CredentialStore } from "../../src/auth/credential-store.ts";
import { STORED_HASHES } from "../../src/auth/password-hash.ts";
import { clusterKeys } from "../../src/cluster/open-store.ts";
import { decodeJson } from "../../src/cluster/store-json.ts";
import { startTestNode } from "../helpers/node.ts";
import { connackCode, metric, uid, useNode, useTempDir } from "./helpers.ts";

const CLIENTID = "svc_auth_clientid";
const USERNAME = "svc_auth_username";

describe("allow_anonymous", () => {
  describe("on (default)", () => {
    const node = useNode();

    it("admits a client no provider knows, counted as anonymous", async () => {
      const before = metric(node(), "auth.mqtt.anonymous");
      expect(await connackCode(node(), 4, { clientId: uid() })).toBe(0);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "nobody", password: "x" })).toBe(0);
      expect(metric(node(), "auth.mqtt.anonymous")).toBe(before + 2);
    });

    it("still refuses a known client id with a wrong password", async () => {
      await node().plugins.load(CLIENTID);
      try {
        await node().services.authClientid.add({ id: "known", password: "right" });
        expect(await connackCode(node(), 5, { clientId: "known", username: "u", password: "wrong" })).toBe(0x86);
        expect(await connackCode(node(), 5, { clientId: uid(), username: "u", password: "wrong" })).toBe(0);
      } finally {
        await node().plugins.unload(CLIENTID);
      }
    });
  });

  describe("off", () => {
    const files = useTempDir();
    files.write(
      "svc_auth_clientid.conf",
      "# preloaded\nauth.client.1.clientid = pre1\nauth.client.1.password = prepw\n\nauth.client.2.clientid = pre2\nauth.client.2.password = pw2\nauth.client.2.is_superuser = true\n",
    );
    const node = useNode({
      allow_anonymous: "false",
      "plugins.etc_dir": files.dir,
      "auth.user.password_hash": "sha512",
    });

    it("refuses a client no provider decides: 3.1.1 code 5, 5.0 0x87", async () => {
      const before = metric(node(), "packets.connack.auth_error");
      expect(await connackCode(node(), 4, { clientId: uid() })).toBe(5);
      expect(await connackCode(node(), 5, { clientId: uid(), username: "x", password: "y" })).toBe(0x87);
      expect(metric(node(), "packets.connack.auth_error")).toBe(before + 2);
    });

    it("svc_auth_clientid: allow, wrong or missing password (4 / 0x86), unknown id ignored; metrics", async () => {
      const n = node();
      await n.plugins.load(CLIENTID);
      try {
        expect(await n.services.authClientid.add({ id: "dev1", password: "s3cret" })).toBe("ok");
        const m = () => [
          metric(n, "auth.clientid.success"),
          metric(n, "auth.clientid.failure"),
          metric(n, "auth.clientid.ignore"),
        ];
        const [s, f, i] = m();
        expect(await connackCode(n, 4, { clientId: "dev1", username: "any", password: "s3cret" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "dev1", username: "any", password: "s3cret" })).toBe(0);
        expect(await connackCode(n, 4, { clientId: "dev1", username: "any", password: "nope" })).toBe(4);
        expect(await connackCode(n, 5, { clientId: "dev1", username: "any", password: "nope" })).toBe(0x86);
        expect(await connackCode(n, 5, { clientId: "dev1" })).toBe(0x86);
        expect(await connackCode(n, 5, { clientId: "other", username: "any", password: "s3cret" })).toBe(0x87);
        expect(m()).toEqual([s + 2, f + 3, i + 1]);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
      // Unloaded: the entry is data, no longer a decision.
      expect(await connackCode(n, 5, { clientId: "dev1", username: "any", password: "s3cret" })).toBe(0x87);
    });

    it("svc_auth_username: allow, refuse, a client without user name is ignored", async () => {
      const n = node();
      await n.plugins.load(USERNAME);
      try {
        await n.services.authUsername.add({ id: "alice", password: "pa55" });
        const before = metric(n, "auth.username.ignore");
        expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "pa55" })).toBe(0);
        expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "bad" })).toBe(4);
        expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "bad" })).toBe(0x86);
        expect(await connackCode(n, 5, { clientId: uid() })).toBe(0x87);
        expect(metric(n, "auth.username.ignore")).toBe(before + 1);
        expect(metric(n, "auth.username.success")).toBeGreaterThanOrEqual(1);
        // auth.user.password_hash = sha512 is what new entries are stored with.
        const e = await n.store.get(clusterKeys(n.config).authUsername("alice"));
        expect(decodeJson<{ hash: string }>(e?.value as Buffer).hash).toBe("sha512");
      } finally {
        await n.plugins.unload(USERNAME);
      }
    });

    it("checks entries stored with every hash option", async () => {
      const n = node();
      await n.plugins.load(USERNAME);
      try {
        for (const hash of STORED_HASHES) {
          const creds = new CredentialStore(n.store, clusterKeys(n.config), "username", { hash, bcryptRounds: 4 });
          await creds.add(`user-${hash}`, `pw-${hash}`);
          expect(
            await connackCode(n, 5, { clientId: uid(), username: `user-${hash}`, password: `pw-${hash}` }),
            hash,
          ).toBe(0);
          expect(await connackCode(n, 5, { clientId: uid(), username: `user-${hash}`, password: "pw-x" }), hash).toBe(
            0x86,
          );
        }
      } finally {
        await n.plugins.unload(USERNAME);
      }
    });

    it("chains providers in start order; an unknown id is passed to the next", async () => {
      const n = node();
      await n.services.authClientid.add({ id: "both", password: "client-pw" });
      await n.services.authUsername.add({ id: "user1", password: "user-pw" });
      const asUser = { clientId: "both", username: "user1", password: "user-pw" };
      await n.plugins.load(CLIENTID);
      await n.plugins.load(USERNAME);
      try {
        // svc_auth_clientid started first: it knows "both" and refuses the user's password.
        expect(await connackCode(n, 5, asUser)).toBe(0x86);
        // A client id it does not know: ignored, svc_auth_username decides.
        expect(await connackCode(n, 5, { ...asUser, clientId: uid() })).toBe(0);
        // Restarted, svc_auth_clientid is now last in the chain: svc_auth_username decides first.
        await n.plugins.reload(CLIENTID);
        expect(await connackCode(n, 5, asUser)).toBe(0);
        expect(await connackCode(n, 5, { ...asUser, username: "nobody", password: "client-pw" })).toBe(0);
        expect(await connackCode(n, 5, { ...asUser, password: "client-pw" })).toBe(0x86);
      } finally {
        await n.plugins.unload(USERNAME);
        await n.plugins.unload(CLIENTID);
      }
    });

    it("preloads entries from <plugins.etc_dir>/svc_auth_clientid.conf, once", async () => {
      const n = node();
      await n.plugins.load(CLIENTID);
      try {
        expect(await connackCode(n, 5, { clientId: "pre1", username: "u", password: "prepw" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "pre1", username: "u", password: "bad" })).toBe(0x86);
        const pre2 = await n.services.authClientid.get("pre2");
        expect(pre2?.is_superuser).toBe(true);
        // Loading again keeps entries that already match (no rewrite: same creation time).
        await n.plugins.reload(CLIENTID);
        expect((await n.services.authClientid.get("pre2"))?.created_at).toBe(pre2?.created_at);
        // A password changed through the API is set back by the next load.
        await n.services.authClientid.update("pre1", "changed");
        await n.plugins.reload(CLIENTID);
        expect(await connackCode(n, 5, { clientId: "pre1", username: "u", password: "prepw" })).toBe(0);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });
});

describe("plugin configuration files", () => {
  const files = useTempDir();
  files.write(
    "svc_auth_username.conf",
    "auth.user.1.username = a\nauth.user.1.password = p\nauth.user.2.username = b\nauth.user.x.password = q\nauth.user.password_hash = md5\nauth.user.3.is_superuser = maybe\n",
  );
  files.write("svc_auth_clientid.conf", "auth.client.1.clientid = only-id\n");
  const node = useNode({ "plugins.etc_dir": files.dir });

  it("a bad file stops the load, naming every problem with file:line", async () => {
    const err = await node()
      .plugins.load(USERNAME)
      .then(() => undefined)
      .catch((e: Error & { issues?: string[] }) => e);
    const file = `${files.dir}/svc_auth_username.conf`;
    expect(err?.issues).toEqual([
      expect.stringMatching(new RegExp(`^${file}:4: unknown key auth.user.x.password`)),
      expect.stringMatching(new RegExp(`^${file}:5: unknown key auth.user.password_hash .*set it in svc.conf`)),
      `${file}:6: auth.user.3.is_superuser: invalid boolean "maybe" (expected on, off, true or false)`,
    ]);
    expect(node().plugins.isActive(USERNAME)).toBe(false);
  });

  it("an entry without its password is an error at its first line", async () => {
    await expect(node().plugins.load(CLIENTID)).rejects.toThrow(
      `${files.dir}/svc_auth_clientid.conf:1: auth.client.1: needs both clientid and password`,
    );
  });

  it("a missing file is an empty configuration", async () => {
    const n = await startTestNode({ set: { "plugins.etc_dir": `${files.dir}/none` } });
    try {
      await n.plugins.load(USERNAME);
      expect(n.plugins.isActive(USERNAME)).toBe(true);
    } finally {
      await n.close();
    }
  });
});
