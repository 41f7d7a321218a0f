// The cases every database provider passes (svc_auth_mysql, _pgsql, _redis), on a real node with
// real MQTT clients against a real server. The test file starts the server, seeds it and calls
// dbProviderCases inside its describe. Seeded users (the family's hash, password "pw"):
// - alice: may publish `ok/#` and `users/%u/#`, subscribe `ok/#`; `no/1` (publish) and `nosub/s`
//   (subscribe) are denied by the back end's rules;
// - admin: a superuser whose back-end rules would deny publishing `no/1`;
// - nobody else (`nobody` is unknown).

import { expect, it } from "vitest";
import type { BackendServer } from "../helpers/backends/process.ts";
import type { TestNode } from "../helpers/node.ts";
import { connackCode, connect, uid, waitUntil } from "./helpers.ts";

const CLIENTID = "svc_auth_clientid";
/** query_timeout of the cases. */
export const TIMEOUT = 800;
/** What a CONNACK may take beyond the timeout (scheduling on a loaded machine). */
const SLACK = 1500;

export interface DbAuthCaseOptions {
  plugin: string;
  node: () => TestNode;
  /** Writes the plugin's conf: connection keys, `<prefix>.query_timeout = TIMEOUT`, plus `extra`. */
  writeConf(extra?: Record<string, string>): void;
}

export interface DbCaseOptions extends DbAuthCaseOptions {
  alarm: string;
  server: () => BackendServer;
  /** `auth.<family>.on_error`. */
  onErrorKey: string;
  /** Called after the server started again (a server without persistence seeds its data again). */
  restarted?: () => Promise<void>;
}

type SubErr = { packet?: { granted?: number[] } };

function pluginRunner(o: DbAuthCaseOptions) {
  return async function withPlugin<T>(extra: Record<string, string>, body: () => Promise<T>): Promise<T> {
    o.writeConf(extra);
    await o.node().plugins.load(o.plugin);
    try {
      return await body();
    } finally {
      await o.node().plugins.unload(o.plugin);
    }
  };
}

/** Every case: the answers, then the back end down, hanging and back. */
export function dbProviderCases(o: DbCaseOptions): void {
  dbAuthCases(o);
  dbOutageCases(o);
}

/** Allow, deny, ignore to the next provider, ACL rules, superuser. */
export function dbAuthCases(o: DbAuthCaseOptions): void {
  const withPlugin = pluginRunner(o);

  it("allows the right password; a wrong or missing one gets 0x86 / 4", async () => {
    await withPlugin({}, async () => {
      const n = o.node();
      expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
      expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
      expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "bad" })).toBe(0x86);
      expect(await connackCode(n, 4, { clientId: uid(), username: "alice", password: "bad" })).toBe(4);
      expect(await connackCode(n, 5, { clientId: uid(), username: "alice" })).toBe(0x86);
      // A user name that would change a query written as text is only a value.
      expect(await connackCode(n, 5, { clientId: uid(), username: "x' or '1'='1", password: "pw" })).toBe(0x87);
    });
  });

  it("an unknown user goes to the next provider, then allow_anonymous", async () => {
    const n = o.node();
    await n.services.authClientid.add({ id: "db-next", password: "client-pw" });
    await withPlugin({}, async () => {
      await n.plugins.load(CLIENTID);
      try {
        expect(await connackCode(n, 5, { clientId: "db-next", username: "nobody", password: "client-pw" })).toBe(0);
        expect(await connackCode(n, 5, { clientId: "db-next", username: "nobody", password: "nope" })).toBe(0x86);
        // Known here: decided here, whatever svc_auth_clientid would say.
        expect(await connackCode(n, 5, { clientId: "db-next", username: "alice", password: "client-pw" })).toBe(0x86);
        // Nobody decides: allow_anonymous = false.
        expect(await connackCode(n, 5, { clientId: uid(), username: "nobody", password: "x" })).toBe(0x87);
        expect(await connackCode(n, 4, { clientId: uid(), username: "nobody", password: "x" })).toBe(5);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });

  it("ACL rules from the back end: PUBACK 0x87, SUBACK 0x87 / 0x80, %u filled in", async () => {
    await withPlugin({}, async () => {
      const a = await connect(o.node(), 5, { username: "alice", password: "pw" });
      await a.c.publishAsync("ok/1", "x", { qos: 1 });
      await a.c.publishAsync("users/alice/t", "x", { qos: 1 });
      await expect(a.c.publishAsync("no/1", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      await expect(a.c.publishAsync("users/bob/t", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      const err = await a.c.subscribeAsync({ "ok/s": { qos: 1 }, "nosub/s": { qos: 1 } }).catch((e: SubErr) => e);
      expect((err as SubErr).packet?.granted).toEqual([1, 0x87]);
      const b = await connect(o.node(), 4, { username: "alice", password: "pw" });
      const err4 = await b.c.subscribeAsync({ "ok/s": { qos: 1 }, "nosub/s": { qos: 1 } }).catch((e: SubErr) => e);
      expect((err4 as SubErr).packet?.granted).toEqual([1, 0x80]);
    });
  });

  it("a superuser skips the ACL", async () => {
    await withPlugin({}, async () => {
      const admin = await connect(o.node(), 5, { username: "admin", password: "pw" });
      await admin.c.publishAsync("no/1", "x", { qos: 1 });
      const err = await admin.c.subscribeAsync({ "nosub/s": { qos: 1 } }).catch((e: SubErr) => e);
      expect((err as SubErr).packet?.granted ?? [1]).toEqual([1]);
    });
  });
}

/** The server stopped, frozen and back: answers in time, alarm, on_error, recovery. */
export function dbOutageCases(o: DbCaseOptions): void {
  const withPlugin = pluginRunner(o);

  it("back end down: CONNACK within the timeout, alarm, on_error = ignore; back: recovers", async () => {
    const n = o.node();
    await n.services.authClientid.add({ id: "db-down", password: "client-pw" });
    await withPlugin({}, async () => {
      await n.plugins.load(CLIENTID);
      try {
        expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0);
        await o.server().stop();
        try {
          let t0 = Date.now();
          // Ignored: nobody else decides, allow_anonymous = false refuses.
          expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
          expect(Date.now() - t0).toBeLessThan(TIMEOUT + SLACK);
          expect(n.sys.alarms.isActive(o.alarm)).toBe(true);
          // Ignored: the next provider decides.
          t0 = Date.now();
          expect(await connackCode(n, 5, { clientId: "db-down", username: "alice", password: "client-pw" })).toBe(0);
          expect(Date.now() - t0).toBeLessThan(TIMEOUT + SLACK);
        } finally {
          await o.server().start();
          await o.restarted?.();
        }
        // The pool reconnects by itself.
        await waitUntil(
          async () => (await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })) === 0,
          "the provider to answer again",
          15_000,
        );
        expect(n.sys.alarms.isActive(o.alarm)).toBe(false);
      } finally {
        await n.plugins.unload(CLIENTID);
      }
    });
  });

  it("back end hanging: answered at the timeout; on_error = deny refuses, ACL included (not cached)", async () => {
    const n = o.node();
    await withPlugin({ [o.onErrorKey]: "deny" }, async () => {
      const a = await connect(n, 5, { username: "alice", password: "pw" });
      o.server().pause();
      try {
        const t0 = Date.now();
        expect(await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })).toBe(0x87);
        const took = Date.now() - t0;
        expect(took).toBeGreaterThanOrEqual(TIMEOUT - 50);
        expect(took).toBeLessThan(TIMEOUT + SLACK);
        expect(n.sys.alarms.isActive(o.alarm)).toBe(true);
        await expect(a.c.publishAsync("ok/hang", "x", { qos: 1 })).rejects.toMatchObject({ code: 0x87 });
      } finally {
        o.server().resume();
      }
      await waitUntil(
        async () => (await connackCode(n, 5, { clientId: uid(), username: "alice", password: "pw" })) === 0,
        "the provider to answer again",
        15_000,
      );
      // Not cached: allowed once the back end answers.
      await a.c.publishAsync("ok/hang", "x", { qos: 1 });
      expect(n.sys.alarms.isActive(o.alarm)).toBe(false);
    });
  });
}
