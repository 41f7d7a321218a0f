// The ACL on a real node with real clients: rule order, %u/%c placeholders, CIDR, the exact
// marker, acl_nomatch both ways, PUBACK 0x87 and SUBACK 0x80 (3.1.1) / 0x87 (5.0) for denials,
// acl_deny_action = disconnect, superusers unchecked, zones with enable_acl off, the ACL cache
// (entries, hits, expiry, size, clearing, the API), reloading the file with clients connected,
// a rule file that does not parse (start refused, reload refused with file:line), a missing file.

import type { IPubackPacket, IPublishPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import type { ClientInfo } from "../../src/broker/types.ts";
import { req } from "../api/helpers.ts";
import { clientInfo } from "../helpers/client-info.ts";
import { startTestNode } from "../helpers/node.ts";
import { connect, metric, Raw, uid, useNode, useTempDir, waitUntil } from "./helpers.ts";

function fakeClient(o: Partial<ClientInfo>): ClientInfo {
  return clientInfo({ clientId: uid(), peerHost: "10.1.2.3", ...o });
}

const RULES = `# test rules (line form and Erlang terms mixed)
Deny all publish denied/#
Deny all subscribe denied/#
Allow all pubsub users/%u/#
Allow all pubsub clients/%c/#
Allow ipaddr 127.0.0.0/8 subscribe local/#
Allow ipaddr 10.0.0.0/8 subscribe remote/#
{deny, all, subscribe, [{eq, "open/#"}]}.
Allow all pubsub open/# cache/# reload/#
`;

async function publishQos1(raw: Raw, topic: string, id: number): Promise<IPubackPacket> {
  raw.send({ cmd: "publish", topic, payload: Buffer.from("x"), qos: 1, messageId: id, retain: false, dup: false });
  return (await raw.next((p) => p.cmd === "puback" && p.messageId === id)) as IPubackPacket;
}

describe("ACL file on a node (acl_nomatch = deny)", () => {
  const files = useTempDir();
  const aclFile = files.write("acl.conf", RULES);
  const node = useNode({
    acl_file: aclFile,
    acl_nomatch: "deny",
    acl_cache_ttl: "400ms",
    acl_cache_max_size: "3",
  });

  it("a denied publish gets PUBACK 0x87 (5.0) and goes nowhere", async () => {
    const n = node();
    const sub = await connect(n, 5, { username: "watcher" });
    await sub.c.subscribeAsync("users/watcher/#", { qos: 1 });
    const { raw } = await Raw.connect(n, 5, { clientId: uid(), username: "pub" });
    const before = metric(n, "packets.publish.auth_error");
    expect((await publishQos1(raw, "denied/x", 1)).reasonCode).toBe(0x87);
    expect((await publishQos1(raw, "nowhere", 2)).reasonCode).toBe(0x87); // no rule: acl_nomatch
    expect((await publishQos1(raw, "users/pub/x", 3)).reasonCode).toBe(0x10); // allowed, no subscriber
    expect(metric(n, "packets.publish.auth_error")).toBe(before + 2);
    // 3.1.1: the PUBACK carries no code; the message is dropped all the same.
    const { raw: raw4 } = await Raw.connect(n, 4, { clientId: uid(), username: "watcher" });
    expect((await publishQos1(raw4, "users/watcher/x", 4)).cmd).toBe("puback");
    raw4.send({ cmd: "publish", topic: "denied/y", payload: Buffer.from("no"), qos: 0, retain: false, dup: false });
    const mark = await connect(n, 5, { username: "watcher" });
    await mark.c.publishAsync("users/watcher/mark", "mark", { qos: 1 });
    await sub.inbox.waitFor((m) => m.payload === "mark");
    expect(sub.inbox.payloads()).toEqual(["x", "mark"]);
  });

  it("a denied subscription gets SUBACK 0x80 (3.1.1) or 0x87 (5.0), the others are granted", async () => {
    const n = node();
    const filters = ["denied/#", "users/u1/#", "nowhere/#", "local/a", "remote/a", "open/#", "open/+"];
    const subs = filters.map((topic) => ({ topic, qos: 1 as const }));
    const { raw: r5 } = await Raw.connect(n, 5, { clientId: uid(), username: "u1" });
    expect((await r5.subscribe(subs)).granted).toEqual([0x87, 1, 0x87, 1, 0x87, 0x87, 1]);
    const { raw: r4 } = await Raw.connect(n, 4, { clientId: uid(), username: "u1" });
    expect((await r4.subscribe(subs)).granted).toEqual([0x80, 1, 0x80, 1, 0x80, 0x80, 1]);
    // A shared subscription is checked on its filter.
    expect((await r5.subscribe("$share/g/denied/x")).granted).toEqual([0x87]);
    expect((await r5.subscribe("$share/g/users/u1/x")).granted).toEqual([1]);
  });

  it("%u and %c: a client reaches its own topics only", async () => {
    const n = node();
    const id = uid("dev");
    const { raw } = await Raw.connect(n, 5, { clientId: id, username: "alice" });
    expect((await publishQos1(raw, "users/alice/t", 1)).reasonCode).toBe(0x10);
    expect((await publishQos1(raw, "users/bob/t", 2)).reasonCode).toBe(0x87);
    expect((await publishQos1(raw, `clients/${id}/t`, 3)).reasonCode).toBe(0x10);
    expect((await publishQos1(raw, "clients/other/t", 4)).reasonCode).toBe(0x87);
    // No user name: %u cannot match.
    const { raw: anon } = await Raw.connect(n, 5, { clientId: uid() });
    expect((await anon.subscribe("users/+/t")).granted).toEqual([0x87]);
  });

  it("superusers are not checked", async () => {
    const n = node();
    await n.plugins.load("svc_auth_username");
    try {
      await n.services.authUsername.add({ id: "root", password: "r", is_superuser: true });
      await n.services.authUsername.add({ id: "plain", password: "p" });
      const { raw } = await Raw.connect(n, 5, { clientId: uid(), username: "root", password: Buffer.from("r") });
      expect((await raw.subscribe("denied/#")).granted).toEqual([1]);
      expect((await publishQos1(raw, "denied/x", 1)).reasonCode).toBe(0); // and it reaches its own subscription
      const { raw: p } = await Raw.connect(n, 5, { clientId: uid(), username: "plain", password: Buffer.from("p") });
      expect((await p.subscribe("denied/#")).granted).toEqual([0x87]);
    } finally {
      await n.plugins.unload("svc_auth_username");
    }
  });

  it("IP rules and zones without ACL, checked through the hook", () => {
    const n = node();
    const check = (c: ClientInfo, topic: string) =>
      n.broker.hooks.fold("client.check_acl", [c, "subscribe", topic], "allow", "deny");
    expect(check(fakeClient({ peerHost: "10.9.9.9" }), "remote/a")).toBe("allow");
    expect(check(fakeClient({ peerHost: "10.9.9.9" }), "local/a")).toBe("deny");
    expect(check(fakeClient({ peerHost: "::ffff:127.0.0.1" }), "local/a")).toBe("allow");
    // zone.internal.enable_acl is off by default.
    expect(check(fakeClient({ zone: "internal" }), "denied/x")).toBe("allow");
  });

  it("caches decisions per client: entries, hits, size limit, expiry, clearing, through the API", async () => {
    const n = node();
    const c = await connect(n, 5, { username: "cacher" });
    const hits = metric(n, "client.acl.cache_hit");
    await c.c.publishAsync("cache/1", "a", { qos: 1 });
    await c.c.publishAsync("cache/1", "a", { qos: 1 });
    expect(metric(n, "client.acl.cache_hit")).toBe(hits + 1);
    const entries = (await req(n, "GET", `/api/v3/clients/${c.id}/acl_cache`)).body.data;
    expect(entries).toEqual([
      { access: "publish", result: "allow", topic: "cache/1", updated_time: expect.any(Number) },
    ]);
    expect(Math.abs(entries[0].updated_time - Date.now())).toBeLessThan(2000);
    await c.c.subscribeAsync("denied/z", { qos: 0 }).catch(() => undefined);
    await c.c.publishAsync("cache/2", "a", { qos: 1 });
    await c.c.publishAsync("cache/3", "a", { qos: 1 });
    // acl_cache_max_size = 3: the oldest (cache/1) went.
    const topics = (await req(n, "GET", `/api/v4/clients/${c.id}/acl_cache`)).body.data.map(
      (e: { access: string; topic: string; result: string }) => `${e.access} ${e.topic} ${e.result}`,
    );
    expect(topics).toEqual(["subscribe denied/z deny", "publish cache/2 allow", "publish cache/3 allow"]);
    // DELETE clears it.
    expect((await req(n, "DELETE", `/api/v3/clients/${c.id}/acl_cache`)).body).toEqual({ code: 0 });
    expect(n.services.clients.aclCache(c.id)).toEqual([]);
    // acl_cache_ttl = 400ms: an entry expires and the next check is a miss.
    await c.c.publishAsync("cache/4", "a", { qos: 1 });
    expect(n.services.clients.aclCache(c.id)?.length).toBe(1);
    await waitUntil(() => n.services.clients.aclCache(c.id)?.length === 0, "the ACL cache entry to expire", 3000);
    expect(n.services.clients.aclCache(c.id)).toEqual([]);
    const before = metric(n, "client.acl.cache_hit");
    await c.c.publishAsync("cache/4", "a", { qos: 1 });
    expect(metric(n, "client.acl.cache_hit")).toBe(before);
  });

  it("reloads the file with clients connected; a bad file leaves the rules in force", async () => {
    const n = node();
    const { raw } = await Raw.connect(n, 5, { clientId: uid(), username: "r" });
    expect((await publishQos1(raw, "reload/x", 1)).reasonCode).toBe(0x10);
    files.write(
      "acl.conf",
      `${RULES.replace("Allow all pubsub open/# cache/# reload/#", "Deny all publish reload/#")}`,
    );
    expect(n.services.acl.reload()).toEqual({ rules: 8 });
    expect((await publishQos1(raw, "reload/x", 2)).reasonCode).toBe(0x87);
    expect(raw.isClosed).toBe(false);
    files.write("acl.conf", "Allow all pubsub #\nAllow nobody x\n");
    const bad = n.services.acl.reload();
    expect(bad).toEqual({
      error: `${aclFile}:2: unknown identity "nobody" (expected all, user, client, ipaddr, ipaddrs, and(...) or or(...))`,
    });
    expect((await publishQos1(raw, "reload/x", 3)).reasonCode).toBe(0x87);
    files.write("acl.conf", RULES);
    expect(n.services.acl.reload()).toEqual({ rules: 8 });
    expect((await publishQos1(raw, "reload/x", 4)).reasonCode).toBe(0x10);
  });
});

describe("acl_nomatch = allow, acl_deny_action = disconnect", () => {
  const files = useTempDir();
  const node = useNode({
    acl_file: files.write("acl.conf", '{deny, all, pubsub, ["denied/#"]}.\n'),
    acl_deny_action: "disconnect",
  });

  it("a topic no rule names is allowed", async () => {
    const { raw } = await Raw.connect(node(), 5, { clientId: uid() });
    expect((await raw.subscribe("free/#")).granted).toEqual([1]);
    expect((await publishQos1(raw, "free/x", 1)).reasonCode).toBe(0);
    const got = (await raw.next("publish")) as IPublishPacket;
    expect(got.topic).toBe("free/x");
  });

  it("a denied publish or subscribe disconnects (5.0: DISCONNECT 0x87)", async () => {
    const { raw } = await Raw.connect(node(), 5, { clientId: uid() });
    raw.send({
      cmd: "publish",
      topic: "denied/x",
      payload: Buffer.from("x"),
      qos: 1,
      messageId: 1,
      retain: false,
      dup: false,
    });
    expect((await raw.disconnected()).reasonCode).toBe(0x87);
    const { raw: s } = await Raw.connect(node(), 5, { clientId: uid() });
    s.send({ cmd: "subscribe", messageId: 7, subscriptions: [{ topic: "denied/#", qos: 0 }] });
    expect((await s.disconnected()).reasonCode).toBe(0x87);
    const { raw: r4 } = await Raw.connect(node(), 4, { clientId: uid() });
    r4.send({ cmd: "publish", topic: "denied/x", payload: Buffer.from("x"), qos: 0, retain: false, dup: false });
    await r4.closed();
  });
});

describe("rule file problems", () => {
  const files = useTempDir();

  it("a file that does not parse stops the start with file:line", async () => {
    const bad = files.write("bad.conf", 'Allow all\n{allow, {user, "x"}, publish, ["t"]}\n');
    await expect(startTestNode({ set: { acl_file: bad } })).rejects.toThrow(`${bad}:3: expected "." after the rule`);
  });

  it("a missing file leaves no rules: acl_nomatch, and only local clients may subscribe to $SYS", async () => {
    const n = await startTestNode({ set: { acl_file: `${files.dir}/missing.conf` } });
    try {
      const check = (c: ClientInfo, topic: string) =>
        n.broker.hooks.fold("client.check_acl", [c, "subscribe", topic], "allow", "deny");
      expect(check(fakeClient({ peerHost: "10.0.0.1" }), "$SYS/#")).toBe("deny");
      expect(check(fakeClient({ peerHost: "10.0.0.1" }), "a/#")).toBe("allow");
      expect(check(fakeClient({ peerHost: "127.0.0.1" }), "$SYS/#")).toBe("allow");
      expect(n.services.acl.rules).toBe(0);
      files.write("missing.conf", "Deny all subscribe a/#\n");
      expect(n.services.acl.reload()).toEqual({ rules: 1 });
      expect(check(fakeClient({ peerHost: "10.0.0.1" }), "a/#")).toBe("deny");
      expect(check(fakeClient({ peerHost: "10.0.0.1" }), "$SYS/#")).toBe("allow");
    } finally {
      await n.close();
    }
  });

  it("the default acl.conf: $SYS only for local clients and the dashboard user", async () => {
    const n = await startTestNode();
    try {
      const sub = await connect(n, 5, {});
      expect((await sub.c.subscribeAsync("$SYS/brokers/+/version", { qos: 0 }))[0].qos).toBe(0);
      const check = (c: ClientInfo, topic: string) =>
        n.broker.hooks.fold("client.check_acl", [c, "subscribe", topic], "allow", "deny");
      expect(check(fakeClient({}), "$SYS/#")).toBe("deny");
      expect(check(fakeClient({ username: "dashboard" }), "$SYS/#")).toBe("allow");
      expect(check(fakeClient({}), "#")).toBe("deny");
      expect(check(fakeClient({}), "a/#")).toBe("allow");
    } finally {
      await n.close();
    }
  });
});
