// The credential services under the API: first-start setup (once, marked in the store), the
// warnings while the well-known admin/public pairs still work, bcrypt hashes at rest, the cache of
// successful checks (cleared by any change), and the records over a cluster store.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ClusterKeys } from "../../src/cluster/keys.ts";
import { MemoryStore } from "../../src/cluster/memory-store.ts";
import { loadConfig } from "../../src/config/index.ts";
import { startNode } from "../../src/main.ts";
import { AppService, type StoredApp } from "../../src/services/apps.ts";
import { SecretHasher, type SetupMarker, setUpCredentials } from "../../src/services/credentials.ts";
import { MemoryRecords, storeRecords } from "../../src/services/records.ts";
import { type StoredUser, UserService } from "../../src/services/users.ts";
import { createLogger } from "../../src/telemetry/logger.ts";
import { startTestNode } from "../helpers/node.ts";
import { req } from "./helpers.ts";

function setup() {
  const hasher = new SecretHasher(4);
  const appRecords = new MemoryRecords<StoredApp>();
  const userRecords = new MemoryRecords<StoredUser>();
  const meta = new MemoryRecords<SetupMarker>();
  const apps = new AppService(appRecords, hasher);
  const users = new UserService(userRecords, hasher, "admin");
  return { apps, users, meta, appRecords, userRecords, hasher };
}

const defaults = { appId: "admin", appSecret: "public", userPassword: "public" };

describe("credential setup", () => {
  it("creates the defaults once and warns while admin/public still work", async () => {
    const s = setup();
    const w = await setUpCredentials(s.apps, s.users, s.meta, defaults, s.hasher);
    expect(w).toHaveLength(2);
    expect(w.join("\n")).toMatch(/application admin\/public.*default secret/);
    expect(w.join("\n")).toMatch(/dashboard user admin\/public.*default password/);
    expect((await s.appRecords.list())[0].secret_hash).toMatch(/^\$2[aby]\$04\$/);
    expect(JSON.stringify(await s.userRecords.list())).not.toContain('"public"');
    // Changed secrets: no warning. Deleted defaults: not recreated at the next start.
    await s.apps.remove("admin");
    await s.apps.create({ app_id: "ci", secret: "long-random-secret" });
    expect(await s.users.changePassword("admin", "public", "better")).toBe("ok");
    expect(await setUpCredentials(s.apps, s.users, s.meta, defaults, s.hasher)).toEqual([]);
    expect(await s.apps.get("admin")).toBeUndefined();
  });

  it("a restart checks the defaults without a bcrypt round, and sees a changed secret", async () => {
    const s = setup();
    expect(await setUpCredentials(s.apps, s.users, s.meta, defaults, s.hasher)).toHaveLength(2);
    expect(s.hasher.compares).toBe(0); // hashed here: known to be of the well-known secret
    // A restart: a new hasher over the same records and marker.
    const restart = () => {
      const hasher = new SecretHasher(4);
      return {
        hasher,
        apps: new AppService(s.appRecords, hasher),
        users: new UserService(s.userRecords, hasher, "admin"),
      };
    };
    const r1 = restart();
    expect(await setUpCredentials(r1.apps, r1.users, s.meta, defaults, r1.hasher)).toHaveLength(2);
    expect(r1.hasher.compares).toBe(0);
    expect(await r1.users.changePassword("admin", "public", "better")).toBe("ok");
    const r2 = restart();
    const w = await setUpCredentials(r2.apps, r2.users, s.meta, defaults, r2.hasher);
    expect(w).toHaveLength(1);
    expect(w[0]).toMatch(/application admin\/public/);
    expect(r2.hasher.compares).toBe(1); // the new password's hash, once
    const r3 = restart();
    expect(await setUpCredentials(r3.apps, r3.users, s.meta, defaults, r3.hasher)).toHaveLength(1);
    expect(r3.hasher.compares).toBe(0);
    // A disabled application with the well-known secret raises no warning.
    await r3.apps.update("admin", { status: false });
    expect(await setUpCredentials(r3.apps, r3.users, s.meta, defaults, r3.hasher)).toEqual([]);
  });

  it("configured defaults other than admin/public raise no warning", async () => {
    const s = setup();
    expect(
      await setUpCredentials(s.apps, s.users, s.meta, { appId: "ops", appSecret: "x1", userPassword: "y2" }, s.hasher),
    ).toEqual([]);
    expect(await s.apps.verify("ops", "x1")).toBe(true);
  });

  it("a cached check does not outlive a change", async () => {
    const s = setup();
    await s.apps.create({ app_id: "a", secret: "one" });
    expect(await s.apps.verify("a", "one")).toBe(true);
    expect(await s.apps.verify("a", "one")).toBe(true);
    await s.apps.update("a", { status: false });
    expect(await s.apps.verify("a", "one")).toBe(false);
    await s.apps.update("a", { status: true });
    expect(await s.apps.verify("a", "one")).toBe(true);
    await s.apps.remove("a");
    expect(await s.apps.verify("a", "one")).toBe(false);
    expect(await s.users.verify("nobody", "one")).toBe(false);
  });
});

describe("start-up warning", () => {
  it("a node logs a warning while the default credentials are unchanged", async () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-api-"));
    const logFile = join(dir, "node.log");
    const config = loadConfig({
      overrides: {
        "node.data_dir": join(dir, "data"),
        "listener.tcp.external": "127.0.0.1:0",
        "listener.ssl.external": "off",
        "listener.ws.external": "off",
        "listener.wss.external": "off",
        "management.listener.http": "127.0.0.1:0",
        "management.listener.http_v2": "off",
      },
    });
    const node = await startNode(config, {
      logger: createLogger({ level: "warning", node: "t", destination: logFile }),
      bcryptRounds: 4,
    });
    try {
      const log = readFileSync(logFile, "utf8");
      expect(log).toMatch(/management application admin\/public still has its default secret/);
      expect(log).toMatch(/dashboard user admin\/public still has its default password/);
    } finally {
      await node.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("records in the cluster store", () => {
  it("JSON records under ClusterKeys, insert as compare-and-swap, list in key order", async () => {
    const store = new MemoryStore();
    const keys = new ClusterKeys("svccl", "svccl");
    const recs = storeRecords<{ n: number }>(store, keys.apps(), (id) => keys.app(id));
    expect(await recs.insert("b/1", { n: 1 })).toBe(true);
    expect(await recs.insert("b/1", { n: 2 })).toBe(false);
    expect(await recs.insert("a", { n: 3 })).toBe(true);
    expect(await recs.get("b/1")).toEqual({ n: 1 });
    expect(JSON.parse((await store.get(keys.app("b/1")))?.value.toString() ?? "null")).toEqual({ n: 1 });
    expect(await recs.list()).toEqual([{ n: 3 }, { n: 1 }]);
    await recs.put("a", { n: 4 });
    expect(await recs.get("a")).toEqual({ n: 4 });
    expect(await recs.delete("a")).toBe(true);
    expect(await recs.delete("a")).toBe(false);
    expect(await recs.list()).toEqual([{ n: 1 }]);
    await store.close();
  });

  it("applications and users survive a restart; a deleted default stays deleted", async () => {
    const first = await startTestNode();
    try {
      await req(first, "POST", "/api/v3/apps", { body: { app_id: "kept", secret: "kept-secret" } });
      await req(first, "POST", "/api/v3/users", { body: { username: "kept-user", password: "pw" } });
      await req(first, "PUT", "/api/v3/change_pwd/admin", { body: { old_pwd: "public", new_pwd: "changed" } });
      expect((await req(first, "DELETE", "/api/v3/apps/admin", { auth: ["kept", "kept-secret"] })).body).toEqual({
        code: 0,
      });
    } finally {
      await first.close(true);
    }
    const second = await startTestNode({ dataDir: first.dataDir });
    try {
      expect((await req(second, "GET", "/api/v3/brokers", { auth: ["kept", "kept-secret"] })).status).toBe(200);
      expect((await req(second, "GET", "/api/v3/brokers")).status).toBe(401);
      expect((await req(second, "GET", "/api/v2/management/nodes", { auth: ["kept-user", "pw"] })).status).toBe(200);
      expect((await req(second, "GET", "/api/v2/management/nodes", { auth: ["admin", "changed"] })).status).toBe(200);
    } finally {
      await second.close();
    }
  });
});
