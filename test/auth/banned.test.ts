// Bans on a real node: the API (`GET/POST /banned`, `DELETE /banned/{as}/{who}`, the catalogue's
// `/banned/{who}`; shapes, defaults, 107/108/404), refusal at CONNECT (3.1.1: 5, 5.0: 0x8A, also
// for a 5.0 enhanced-auth CONNECT), by client id, user name and peer address, the kick of matching
// connected clients when a ban is made, expiry and the sweep that deletes expired bans, zones with
// enable_ban off.

import { describe, expect, it } from "vitest";
import { canonicalHost } from "../../src/auth/banned.ts";
import type { ClientInfo } from "../../src/broker/types.ts";
import { clusterKeys } from "../../src/cluster/open-store.ts";
import { expectError, expectShape, http, req } from "../api/helpers.ts";
import { clientInfo } from "../helpers/client-info.ts";
import { connackCode, connect, uid, useNode, waitUntil } from "./helpers.ts";

const now = () => Math.floor(Date.now() / 1000);

describe("bans", () => {
  const node = useNode({ "zone.internal.enable_ban": "off" });

  it("POST /banned creates a ban with the defaults and echoes the body; GET lists it", async () => {
    const n = node();
    const who = uid("b");
    const t0 = now();
    const created = await req(n, "POST", "/api/v3/banned", { body: { who, as: "clientid", reason: "spam" } });
    expect(created.status).toBe(200);
    expect(created.body).toEqual({ code: 0, data: { who, as: "clientid", reason: "spam" } });
    const list = await req(n, "GET", "/api/v3/banned");
    expect(list.body.code).toBe(0);
    expect(list.body.meta).toEqual({ page: 1, limit: 10000, count: list.body.data.length });
    const ban = list.body.data.find((b: { who: string }) => b.who === who);
    expectShape(ban, { who: "string", as: "string", by: "string", reason: "string", at: "int", until: "int" }, "ban");
    expect(ban).toMatchObject({ as: "clientid", by: "user", reason: "spam" });
    expect(ban.at).toBeGreaterThanOrEqual(t0);
    expect(ban.until).toBe(ban.at + 300);
    // Explicit values are kept.
    const full = { who: uid("f"), as: "username", by: "ops", reason: "r", at: t0 - 10, until: t0 + 1000 };
    expect((await req(n, "POST", "/api/v4/banned", { body: full })).body).toEqual({ code: 0, data: full });
    expect((await req(n, "GET", "/api/v4/banned")).body.data).toContainEqual(full);
    expect((await req(n, "GET", "/api/v3/banned?_limit=1&_page=2")).body.meta).toEqual({
      page: 2,
      limit: 1,
      count: list.body.data.length + 1,
    });
  });

  it("refuses a banned client id, user name or address at CONNECT: 3.1.1 code 5, 5.0 0x8A", async () => {
    const n = node();
    const id = uid("bc");
    const user = uid("bu");
    await n.services.banned.create({ who: id, as: "clientid" });
    await n.services.banned.create({ who: user, as: "username" });
    expect(await connackCode(n, 4, { clientId: id })).toBe(5);
    expect(await connackCode(n, 5, { clientId: id })).toBe(0x8a);
    expect(await connackCode(n, 5, { clientId: uid(), username: user, password: "x" })).toBe(0x8a);
    expect(await connackCode(n, 5, { clientId: uid(), username: "fine" })).toBe(0);
    // The 5.0 AUTH exchange is refused the same way (no method provider: 0x8C otherwise).
    const auth = { properties: { authenticationMethod: "SCRAM-SHA-256" } };
    expect(await connackCode(n, 5, { clientId: uid(), ...auth })).toBe(0x8c);
    expect(await connackCode(n, 5, { clientId: id, ...auth })).toBe(0x8a);
    // By address: every client of 127.0.0.1 (IPv6 forms of the same address are the same ban).
    await n.services.banned.create({ who: "::ffff:127.0.0.1", as: "peerhost" });
    try {
      expect(await connackCode(n, 5, { clientId: uid() })).toBe(0x8a);
    } finally {
      expect(await n.services.banned.delete("peerhost", "127.0.0.1")).toBe(true);
    }
    expect(await connackCode(n, 5, { clientId: uid() })).toBe(0);
    // Zones with enable_ban off are not checked.
    const internal = { ...fake(id), zone: "internal" };
    const start = { rc: 0, superuser: false, by: "anonymous" };
    expect(n.broker.hooks.fold("client.authenticate", [internal, creds()], start)).toEqual(start);
    expect(n.broker.hooks.fold("client.authenticate", [fake(id), creds()], start)).toMatchObject({ rc: 0x8a });
  });

  it("a new ban kicks the matching connected clients", async () => {
    const n = node();
    const byId = await connect(n, 5, {});
    const byUser = await connect(n, 4, { username: uid("ku") });
    const bystander = await connect(n, 5, {});
    await req(n, "POST", "/api/v3/banned", { body: { who: byId.id, as: "clientid" } });
    expect((await byId.disconnect).reasonCode).toBe(0x98);
    await byId.closed;
    await n.services.banned.create({ who: byUser.c.options.username as string, as: "username" });
    await byUser.closed;
    await waitUntil(() => n.services.clients.lookup(byUser.id).length === 0, "kicked session gone");
    expect(bystander.c.connected).toBe(true);
  });

  it("a ban ends at `until`, and the sweep deletes it from the store", async () => {
    const n = node();
    const id = uid("exp");
    await n.services.banned.create({ who: id, as: "clientid", until: now() + 1 });
    expect(await connackCode(n, 5, { clientId: id })).toBe(0x8a);
    const key = clusterKeys(n.config).ban("clientid", id);
    expect(await n.store.get(key)).toBeDefined();
    await waitUntil(() => n.services.banned.list().every((b) => b.who !== id), "ban expiry", 3000);
    expect(await connackCode(n, 5, { clientId: id })).toBe(0);
    const gone = async () => (await n.store.get(key)) === undefined;
    const end = Date.now() + 3000;
    while (!(await gone()) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    expect(await gone()).toBe(true);
    // A ban whose `until` has passed already applies to nobody.
    await n.services.banned.create({ who: id, as: "clientid", until: now() - 1 });
    expect(await connackCode(n, 5, { clientId: id })).toBe(0);
  });

  it("DELETE /banned/{as}/{who} and the catalogue's /banned/{who}", async () => {
    const n = node();
    const who = uid("d");
    await n.services.banned.create({ who, as: "clientid" });
    await n.services.banned.create({ who, as: "username" });
    expect((await req(n, "DELETE", `/api/v3/banned/clientid/${who}`)).body).toEqual({ code: 0 });
    expectError(await req(n, "DELETE", `/api/v3/banned/clientid/${who}`), 404, 404);
    expect(await connackCode(n, 5, { clientId: who })).toBe(0);
    expect(await connackCode(n, 5, { clientId: uid(), username: who })).toBe(0x8a);
    expectError(await req(n, "DELETE", `/api/v3/banned/${who}?as=clientid`), 404, 404);
    expect((await http(n, "http", "DELETE", `/api/v4/banned/${who}`)).body).toEqual({ code: 0 });
    expectError(await req(n, "DELETE", `/api/v3/banned/${who}`), 404, 404);
    // A who with a slash, URL-encoded.
    await n.services.banned.create({ who: "a/b", as: "clientid" });
    expect((await req(n, "DELETE", "/api/v3/banned/clientid/a%2Fb")).body).toEqual({ code: 0 });
  });

  it("answers 107 for a missing who or as, 108 for a bad as or address", async () => {
    const n = node();
    expectError(await req(n, "POST", "/api/v3/banned", { body: { as: "clientid" } }), 400, 107);
    expectError(await req(n, "POST", "/api/v3/banned", { body: { who: "x" } }), 400, 107);
    const badAs = await req(n, "POST", "/api/v3/banned", { body: { who: "x", as: "ip" } });
    expectError(badAs, 400, 108);
    expect(badAs.body.message).toBe("Value as must be clientid, username or peerhost");
    expectError(await req(n, "POST", "/api/v3/banned", { body: { who: "nohost", as: "peerhost" } }), 400, 108);
    expectError(
      await req(n, "POST", "/api/v3/banned", { body: { who: "x", as: "clientid", until: "soon" } }),
      400,
      108,
    );
    expectError(await req(n, "POST", "/api/v3/banned", { raw: "{nope" }), 400, 109);
    expectError(await req(n, "DELETE", "/api/v3/banned/ip/x"), 400, 108);
    expectError(await req(n, "DELETE", "/api/v3/banned/x?as=ip"), 400, 108);
    expectError(await req(n, "GET", "/api/v3/banned", { auth: null }), 401, 104);
  });
});

describe("peer address bans", () => {
  it("compare addresses in one form (IPv6 compressed, IPv4-mapped as IPv4)", () => {
    expect(canonicalHost("::FFFF:127.0.0.1")).toBe("127.0.0.1");
    expect(canonicalHost("::ffff:7f00:1")).toBe("127.0.0.1");
    expect(canonicalHost("2001:DB8:0:0::1")).toBe("2001:db8::1");
    expect(canonicalHost("10.0.0.1")).toBe("10.0.0.1");
    expect(canonicalHost("::1")).toBe("::1");
  });
});

function fake(clientId: string): ClientInfo {
  return clientInfo({ clientId, peerHost: "10.0.0.1" });
}

function creds() {
  return { username: undefined, password: undefined, authMethod: undefined, authData: undefined };
}
