// `/data/export`, `/data/import`, `/data/file` on a real node: records made through the API are
// exported (secrets hashed), deleted through the API, imported back and usable (the application
// authenticates, the dashboard user too, a clientid entry lets an MQTT.js client in, the ban
// refuses its client); an import replaces records of the same key and deletes nothing else; backup
// files are listed, downloaded, deleted and uploaded; bad names are 400/108, unknown files 404,
// bad bodies 107/108/109, and an invalid document writes nothing.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterKeys } from "../../src/cluster/open-store.ts";
import { connackCode } from "../auth/helpers.ts";
import type { TestNode } from "../helpers/node.ts";
import { connect, expectError, expectShape, http, req, uid, useNode } from "./helpers.ts";

const FILE_SHAPE = { filename: "string", size: "int", created_at: "string", node: "string" } as const;
const KINDS = ["rules", "resources", "blacklist", "apps", "users", "auth_clientid", "auth_username", "acl"];
const DOC_KEYS = ["version", "date", "node", ...KINDS].sort();

/** Polls an async check until it gives `want` (store mirrors apply a change within a tick). */
async function eventually<T>(f: () => Promise<T>, want: T, timeout = 3000): Promise<void> {
  const end = Date.now() + timeout;
  let got = await f();
  while (got !== want && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    got = await f();
  }
  expect(got).toBe(want);
}

async function exportFile(n: TestNode): Promise<{ filename: string; doc: Record<string, unknown[]> }> {
  const a = await req(n, "POST", "/api/v3/data/export");
  expect(a.status, a.text).toBe(200);
  const filename = a.body.data.filename as string;
  return { filename, doc: JSON.parse(readFileSync(join(n.dataDir, "backup", filename), "utf8")) };
}

describe("data export and import", () => {
  const node = useNode({ allow_anonymous: "false" });
  const clientIn = (id: string, password: string) => connackCode(node(), 5, { clientId: id, username: "u", password });

  it("the catalogue lists the data routes", () => {
    const keys = node().api.catalogue.v3.map((e) => `${e.method} ${e.path}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        "POST /data/export",
        "GET /data/export",
        "POST /data/import",
        "GET /data/file/{filename}",
        "DELETE /data/file/{filename}",
        "POST /data/file",
      ]),
    );
  });

  it("export, delete through the API, import: every record is back and usable", async () => {
    const n = node();
    await n.plugins.load("svc_auth_clientid");
    try {
      const app = uid("app");
      const user = uid("user");
      const device = uid("dev");
      const banned = uid("ban");
      const named = uid("name");
      const appSecret = `secret-${uid()}`;
      const until = Math.floor(Date.now() / 1000) + 3600;
      const made = [
        await req(n, "POST", "/api/v3/apps", { body: { app_id: app, secret: appSecret, desc: "exported" } }),
        await req(n, "POST", "/api/v3/users", { body: { username: user, password: "user-pw", tags: "viewer" } }),
        await req(n, "POST", "/api/v3/auth_clientid", { body: { clientid: device, password: "dev-pw" } }),
        await req(n, "POST", "/api/v3/auth_clientid", { body: { clientid: banned, password: "ban-pw" } }),
        await req(n, "POST", "/api/v3/auth_username", { body: { username: named, password: "name-pw" } }),
        await req(n, "POST", "/api/v3/banned", { body: { who: banned, as: "clientid", reason: "test", until } }),
      ];
      for (const a of made) expect(a.body.code, a.text).toBe(0);
      const appView = (await req(n, "GET", `/api/v3/apps/${app}`)).body.data;
      expect(
        (await connect(n, 5, { clientId: device, username: "u", password: "dev-pw" })).connack.reasonCode ?? 0,
      ).toBe(0);
      await eventually(() => clientIn(banned, "ban-pw"), 0x8a);

      // Export: a file under <data_dir>/backup, its document with every kind, secrets hashed.
      const a = await req(n, "POST", "/api/v3/data/export");
      expect(a.body.code).toBe(0);
      expectShape(a.body.data, FILE_SHAPE, "export");
      const file = a.body.data;
      expect(file.filename).toMatch(/^svc-export-\d{4}-\d{1,2}-\d{1,2}-\d{1,2}-\d{1,2}-\d{1,2}(-\d+)?\.json$/);
      expect(file.node).toBe(n.services.nodes.local);
      expect(file.created_at).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      const path = join(n.dataDir, "backup", file.filename);
      const text = readFileSync(path, "utf8");
      expect(file.size).toBe(Buffer.byteLength(text));
      for (const secret of [appSecret, "user-pw", "dev-pw", "ban-pw", "name-pw"]) expect(text).not.toContain(secret);
      const doc = JSON.parse(text);
      expect(Object.keys(doc).sort()).toEqual(DOC_KEYS);
      expect(doc.version).toBe("1");
      expect(doc.node).toBe(n.services.nodes.local);
      expect(doc.date).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
      expect(doc.rules).toEqual([]);
      expect(doc.resources).toEqual([]);
      expect(doc.acl).toEqual([]);
      const docApp = doc.apps.find((x: { app_id: string }) => x.app_id === app);
      expectShape(
        docApp,
        {
          app_id: "string",
          name: "string",
          desc: "string",
          status: "boolean",
          expired: "string",
          secret_hash: "string",
        },
        "app",
      );
      expect(doc.users.find((x: { username: string }) => x.username === user)).toEqual({
        username: user,
        tags: "viewer",
        password_hash: expect.any(String),
      });
      expect(doc.blacklist).toContainEqual({
        who: banned,
        as: "clientid",
        by: "user",
        reason: "test",
        at: expect.any(Number),
        until,
      });
      for (const [kind, field, id] of [
        ["auth_clientid", "clientid", device],
        ["auth_clientid", "clientid", banned],
        ["auth_username", "username", named],
      ]) {
        const e = doc[kind].find((x: Record<string, string>) => x[field] === id);
        // A user name entry carries its SCRAM-SHA-256 keys too (derived when its password was set).
        const shape: Parameters<typeof expectShape>[1] = {
          [field]: "string",
          password: "string",
          hash: "string",
          is_superuser: "boolean",
          created_at: "int",
        };
        if (kind === "auth_username") shape.scram = "object";
        expectShape(e, shape, kind);
      }
      const listed = await req(n, "GET", "/api/v3/data/export");
      expect(listed.body.data).toContainEqual(file);

      // Wipe them through the API.
      for (const p of [
        `apps/${app}`,
        `users/${user}`,
        `auth_clientid/${device}`,
        `auth_clientid/${banned}`,
        `auth_username/${named}`,
        `banned/clientid/${banned}`,
      ])
        expect((await req(n, "DELETE", `/api/v3/${p}`)).body, p).toEqual({ code: 0 });
      expectError(await req(n, "GET", "/api/v3/brokers", { auth: [app, appSecret] }), 401, 103);
      expectError(await req(n, "GET", "/api/v2/monitoring/nodes", { auth: [user, "user-pw"] }), 401, 103);
      await eventually(() => clientIn(device, "dev-pw"), 0x87);
      await eventually(() => clientIn(banned, "ban-pw"), 0x87);

      // Import the file: the records are back, with their hashed secrets.
      const imp = await req(n, "POST", "/api/v3/data/import", { body: { filename: file.filename } });
      expect(imp.status, imp.text).toBe(200);
      expect(imp.body).toEqual({
        code: 0,
        data: Object.fromEntries(KINDS.map((k) => [k, doc[k].length])),
      });
      expect((await req(n, "GET", "/api/v3/brokers", { auth: [app, appSecret] })).status).toBe(200);
      expect((await http(n, "http", "GET", "/api/v4/brokers", { auth: [app, appSecret] })).status).toBe(200);
      expect((await req(n, "GET", `/api/v3/apps/${app}`)).body.data).toEqual(appView);
      expect((await req(n, "GET", "/api/v2/monitoring/nodes", { auth: [user, "user-pw"] })).status).toBe(200);
      const entry = (await req(n, "GET", `/api/v3/auth_username/${named}`)).body.data;
      expect(entry).toEqual({ username: named, is_superuser: false, created_at: expect.any(Number) });
      await eventually(() => clientIn(device, "dev-pw"), 0);
      const c = await connect(n, 5, { clientId: device, username: "u", password: "dev-pw" });
      expect(c.connack.reasonCode ?? 0).toBe(0);
      expect(c.c.connected).toBe(true);
      expect(await clientIn(device, "wrong")).toBe(0x86);
      await eventually(() => clientIn(banned, "ban-pw"), 0x8a);
      const bans = (await req(n, "GET", "/api/v3/banned")).body.data;
      expect(bans).toContainEqual({
        who: banned,
        as: "clientid",
        by: "user",
        reason: "test",
        at: expect.any(Number),
        until,
      });
    } finally {
      await n.plugins.unload("svc_auth_clientid");
    }
  });

  it("an import replaces records of the same key and deletes nothing else", async () => {
    const n = node();
    const kept = uid("app");
    const later = uid("app");
    await req(n, "POST", "/api/v3/apps", { body: { app_id: kept, secret: "one", desc: "before" } });
    const { doc } = await exportFile(n);
    await req(n, "PUT", `/api/v3/apps/${kept}`, { body: { desc: "after", status: false } });
    await req(n, "POST", "/api/v3/apps", { body: { app_id: later, secret: "two" } });
    // The document itself as the body.
    const imp = await req(n, "POST", "/api/v4/data/import", { body: doc });
    expect(imp.body.code, imp.text).toBe(0);
    expect(imp.body.data.apps).toBe(doc.apps.length);
    const back = (await req(n, "GET", `/api/v3/apps/${kept}`)).body.data;
    expect(back).toMatchObject({ app_id: kept, desc: "before", status: true });
    expect((await req(n, "GET", "/api/v3/brokers", { auth: [kept, "one"] })).status).toBe(200);
    expect((await req(n, "GET", `/api/v3/apps/${later}`)).body.data.app_id).toBe(later);
    expect((await req(n, "GET", "/api/v3/brokers", { auth: [later, "two"] })).status).toBe(200);
  });

  it("imports rules, resources and ACL entries into the store as they are", async () => {
    const n = node();
    const body = {
      version: "1",
      rules: [{ id: "rule:x", sql: 'SELECT * FROM "t/#"', actions: [] }],
      resources: [{ id: "resource:y", type: "web_hook", config: { url: "http://127.0.0.1/" } }],
      acl: [
        { as: "clientid", who: "c/1", topic: "t/#", action: "pub", access: "allow" },
        { as: "all", topic: "#", action: "sub", access: "deny" },
      ],
    };
    const imp = await req(n, "POST", "/api/v3/data/import", { body });
    expect(imp.body).toEqual({
      code: 0,
      data: { rules: 1, resources: 1, blacklist: 0, apps: 0, users: 0, auth_clientid: 0, auth_username: 0, acl: 2 },
    });
    const { doc } = await exportFile(n);
    expect(doc.rules).toEqual(body.rules);
    expect(doc.resources).toEqual(body.resources);
    expect(doc.acl).toEqual(expect.arrayContaining(body.acl.map((e) => expect.objectContaining(e))));
    expect(doc.acl).toHaveLength(2);
    // Cleaned up so that the other tests' exports stay small.
    const k = clusterKeys(n.config);
    for (const prefix of [k.rules(), k.resources(), k.acl()]) await n.store.deletePrefix(prefix);
  });

  it("backup files: list, download, upload, import by name, delete", async () => {
    const n = node();
    const { filename, doc } = await exportFile(n);
    const down = await req(n, "GET", `/api/v3/data/file/${filename}`);
    expect(down.status).toBe(200);
    expect(down.headers.get("content-type")).toMatch(/^application\/json/);
    expect(down.headers.get("content-disposition")).toBe(`attachment; filename="${filename}"`);
    expect(down.body).toEqual(doc);

    const name = `${uid("up")}.json`;
    const up = await req(n, "POST", "/api/v3/data/file", { body: { filename: name, file: doc } });
    expect(up.body.code, up.text).toBe(0);
    expectShape(up.body.data, FILE_SHAPE, "upload");
    expect(up.body.data).toMatchObject({ filename: name, node: n.services.nodes.local });
    expect(existsSync(join(n.dataDir, "backup", name))).toBe(true);
    expectError(await req(n, "POST", "/api/v3/data/file", { body: { filename: name, file: doc } }), 409, 113);
    const asText = `${uid("text")}.json`;
    const up2 = await req(n, "POST", "/api/v3/data/file", { body: { filename: asText, file: JSON.stringify(doc) } });
    expect(up2.body.code, up2.text).toBe(0);
    expect((await req(n, "GET", `/api/v3/data/file/${asText}`)).body).toEqual(doc);

    const list = (await req(n, "GET", "/api/v3/data/export")).body.data as { filename: string }[];
    for (const f of list) expectShape(f, FILE_SHAPE, "listed file");
    expect(list.map((f) => f.filename)).toEqual(expect.arrayContaining([filename, name, asText]));

    const imp = await req(n, "POST", "/api/v3/data/import", { body: { filename: name, node: n.services.nodes.local } });
    expect(imp.body.code, imp.text).toBe(0);
    expect(imp.body.data.apps).toBe(doc.apps.length);
    expectError(
      await req(n, "POST", "/api/v3/data/import", { body: { filename: name, node: "nobody@nowhere" } }),
      404,
      404,
    );

    for (const f of [name, asText]) {
      expect((await http(n, "http_v2", "DELETE", `/api/v3/data/file/${f}`)).body).toEqual({ code: 0 });
      expect(existsSync(join(n.dataDir, "backup", f))).toBe(false);
      expectError(await req(n, "GET", `/api/v3/data/file/${f}`), 404, 404);
      expectError(await req(n, "DELETE", `/api/v3/data/file/${f}`), 404, 404);
    }
    expect(
      (await req(n, "GET", "/api/v3/data/export")).body.data.map((f: { filename: string }) => f.filename),
    ).not.toContain(name);
    expectError(await req(n, "POST", "/api/v3/data/import", { body: { filename: name } }), 404, 404);
  });

  it("bad file names are 400/108", async () => {
    const n = node();
    const { doc } = await exportFile(n);
    for (const bad of [
      "..%2F..%2Fetc%2Fpasswd.json",
      "a%2Fb.json",
      "x.txt",
      ".hidden.json",
      "a%20b.json",
      "..json",
      "%5Cx.json",
    ]) {
      expectError(await req(n, "GET", `/api/v3/data/file/${bad}`), 400, 108);
      expectError(await req(n, "DELETE", `/api/v3/data/file/${bad}`), 400, 108);
    }
    for (const bad of ["../x.json", "a/b.json", "x.txt", "x", "a\\b.json", ""]) {
      const up = await req(n, "POST", "/api/v3/data/file", { body: { filename: bad, file: doc } });
      expect(up.status, bad).toBe(400);
      expect([107, 108]).toContain(up.body.code);
      if (bad !== "") expectError(await req(n, "POST", "/api/v3/data/import", { body: { filename: bad } }), 400, 108);
    }
    expect(existsSync(join(n.dataDir, "x.json"))).toBe(false);
  });

  it("bad bodies: 107 missing, 108 wrong, 109 not JSON; an invalid document writes nothing", async () => {
    const n = node();
    const imp = (body: unknown) => req(n, "POST", "/api/v3/data/import", { body });
    expectError(await imp({}), 400, 107);
    expectError(await imp({ filename: 5 }), 400, 108);
    expectError(
      await req(n, "POST", "/api/v3/data/import", {
        raw: "{not json",
        headers: { "content-type": "application/json" },
      }),
      400,
      109,
    );
    expectError(await imp({ version: 1 }), 400, 108);
    expectError(await imp({ version: "9" }), 400, 108);
    expectError(await imp({ version: "1", apps: {} }), 400, 108);
    expectError(await imp({ version: "1", users: [{ username: "x", tags: "" }] }), 400, 108);
    expectError(
      await imp({ version: "1", blacklist: [{ who: "not-ip", as: "peerhost", by: "", reason: "", at: 0, until: 1 }] }),
      400,
      108,
    );
    expectError(
      await imp({
        version: "1",
        auth_clientid: [{ clientid: "x", password: "", hash: "rot13", is_superuser: false, created_at: 0 }],
      }),
      400,
      108,
    );
    expectError(
      await imp({ version: "1", acl: [{ as: "all", who: "x", topic: "t", action: "pub", access: "allow" }] }),
      400,
      108,
    );
    expectError(await imp({ version: "1", rules: [{ sql: "SELECT 1" }] }), 400, 108);

    const good = uid("app");
    const partly = await imp({
      version: "1",
      apps: [
        { app_id: good, name: good, desc: "", status: true, expired: "undefined", secret_hash: "$2a$04$abc" },
        { app_id: uid("app"), name: "x", desc: "", status: "yes", expired: "undefined", secret_hash: "h" },
      ],
    });
    expectError(partly, 400, 108);
    expect(partly.body.message).toContain("apps.1.status");
    expectError(await req(n, "GET", `/api/v3/apps/${good}`), 404, 404);

    const up = (body: unknown) => req(n, "POST", "/api/v3/data/file", { body });
    expectError(await up({ filename: "a.json" }), 400, 107);
    expectError(await up({ file: {} }), 400, 107);
    expectError(await up({ filename: "a.json", file: "not json" }), 400, 108);
    expectError(await up({ filename: "a.json", file: { version: "1", users: [{}] } }), 400, 108);
    expectError(await up({ filename: "a.json", file: 5 }), 400, 108);
    expect(existsSync(join(n.dataDir, "backup", "a.json"))).toBe(false);
  });
});
