// $SYS topics (spec section 6) seen by a real subscriber on 127.0.0.1: the retained node
// description, every statistics and metrics topic name of both guides as integer text, uptime
// and datetime, client presence payloads field by field; `#` does not match $SYS; the built-in
// guard refuses $SYS subscriptions from peers that are not on the local host.

import { describe, expect, it } from "vitest";
import type { ClientInfo } from "../../src/broker/types.ts";
import { isLocalPeer, sysGuard } from "../../src/sys/sys-guard.ts";
import { connect, type Msg, uid, useNode, waitUntil } from "../conformance/helpers.ts";
import { clientInfo } from "../helpers/client-info.ts";

const STATS = [
  "connections",
  "sessions",
  "sessions/persistent",
  "suboptions",
  "subscribers",
  "subscriptions",
  "subscriptions/shared",
  "topics",
  "routes",
].flatMap((s) => [`stats/${s}/count`, `stats/${s}/max`]);

const each = (names: string[], suffixes: string[]) => names.flatMap((n) => suffixes.map((s) => `${n}/${s}`));

const FIRST_GUIDE = [
  "bytes/received",
  "bytes/sent",
  "packets/received",
  "packets/sent",
  ...["connect", "connack", "subscribe", "suback", "unsubscribe", "unsuback", "pingreq", "pingresp", "auth"].map(
    (p) => `packets/${p}`,
  ),
  ...each(
    ["publish", "puback", "pubrec", "pubrel", "pubcomp"].map((p) => `packets/${p}`),
    ["received", "sent"],
  ),
  ...each(
    ["puback", "pubrec", "pubrel", "pubcomp"].map((p) => `packets/${p}`),
    ["missed"],
  ),
  "packets/disconnect/received",
  "packets/disconnect/sent",
  ...["received", "sent", "expired", "retained", "dropped", "forward"].map((m) => `messages/${m}`),
  ...each(
    ["qos0", "qos1", "qos2"].map((q) => `messages/${q}`),
    ["received", "sent"],
  ),
  "messages/qos2/expired",
  "messages/qos2/dropped",
].map((t) => `metrics/${t}`);

const LATER_GUIDE = [
  "bytes/received",
  "bytes/sent",
  "packets/received",
  "packets/sent",
  ...["connect", "publish", "puback", "pubrec", "pubrel", "pubcomp", "subscribe", "unsubscribe", "pingreq"]
    .concat(["disconnect", "auth"])
    .map((p) => `packets/${p}/received`),
  ...["connack", "publish", "puback", "pubrec", "pubrel", "pubcomp", "suback", "unsuback", "pingresp"]
    .concat(["disconnect", "auth"])
    .map((p) => `packets/${p}/sent`),
  ...each(["packets/publish", "packets/subscribe"], ["error", "auth_error"]),
  "packets/publish/dropped",
  ...each(
    ["puback", "pubrec", "pubcomp"].map((p) => `packets/${p}`),
    ["inuse"],
  ),
  ...each(
    ["puback", "pubrec", "pubrel", "pubcomp"].map((p) => `packets/${p}`),
    ["missed"],
  ),
  ...["received", "sent", "publish", "dropped", "forward", "retained", "delayed", "delivered", "acked"].map(
    (m) => `messages/${m}`,
  ),
  "messages/dropped/expired",
  "messages/dropped/no_subscribers",
  ...each(
    ["qos0", "qos1", "qos2"].map((q) => `messages/${q}`),
    ["received", "sent"],
  ),
].map((t) => `metrics/${t}`);

describe("$SYS topics", () => {
  const node = useNode({ "broker.sys_interval": "200ms", "broker.sys_heartbeat": "200ms" });

  it("publishes the node description, statistics, metrics, uptime and datetime", async () => {
    const n = node();
    const prefix = `$SYS/brokers/${n.broker.nodeName}/`;
    const sub = await connect(n, 5);
    const granted = await sub.c.subscribeAsync("$SYS/#", { qos: 0 });
    expect(granted[0].qos).toBe(0);
    const at = (suffix: string): Promise<Msg> =>
      sub.inbox.waitFor((m) => m.topic === `${prefix}${suffix}`, `${prefix}${suffix}`);

    const brokers = await sub.inbox.waitFor((m) => m.topic === "$SYS/brokers", "$SYS/brokers");
    expect([brokers.payload, brokers.packet.retain]).toEqual([n.broker.nodeName, true]);
    const version = await at("version");
    expect(version.payload).toMatch(/^\d+\.\d+\.\d+/);
    expect(version.packet.retain).toBe(true);
    expect((await at("sysdescr")).payload).toBe("svc");
    expect((await at("uptime")).payload).toMatch(/^(\d+ days, )?(\d+ hours, )?(\d+ minutes, )?\d+ seconds$/);
    expect((await at("datetime")).payload).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);

    for (const t of [...STATS, ...FIRST_GUIDE, ...LATER_GUIDE]) expect((await at(t)).payload, t).toMatch(/^\d+$/);
    // Values are the registry's: one client connected and subscribed, no QoS 2 traffic yet.
    const last = (suffix: string) => sub.inbox.all.findLast((m) => m.topic === `${prefix}${suffix}`)?.payload;
    expect(last("stats/connections/count")).toBe("1");
    expect(last("stats/subscriptions/count")).toBe("1");
    expect(last("stats/topics/count")).toBe(last("stats/routes/count"));
    expect(last("metrics/messages/qos2/received")).toBe("0");
    expect(last("metrics/packets/connect")).toBe(last("metrics/packets/connect/received"));
    expect(last("metrics/packets/subscribe")).toBe(String(n.broker.metrics.get("packets.subscribe.received")));
  });

  it("announces clients going online and offline with the spec's JSON fields", async () => {
    const n = node();
    const prefix = `$SYS/brokers/${n.broker.nodeName}/clients/`;
    const watcher = await connect(n, 4);
    await watcher.c.subscribeAsync(`$SYS/brokers/+/clients/#`, { qos: 0 });
    const id = uid("pres");
    const before = Date.now();
    const c = await connect(n, 5, { clientId: id, username: "u1", keepalive: 30, clean: true });
    const on = await watcher.inbox.waitFor((m) => m.topic === `${prefix}${id}/connected`, "connected");
    const p = JSON.parse(on.payload) as Record<string, unknown>;
    expect(Object.keys(p).sort()).toEqual(
      [
        "clientid",
        "username",
        "ipaddress",
        "connack",
        "ts",
        "proto_ver",
        "proto_name",
        "clean_start",
        "keepalive",
        "sockport",
        "expiry_interval",
        "connected_at",
      ].sort(),
    );
    expect(p.clientid).toBe(id);
    expect(p.username).toBe("u1");
    expect(p.ipaddress).toBe("127.0.0.1");
    expect(p.connack).toBe(0);
    expect(p.proto_ver).toBe(5);
    expect(p.proto_name).toBe("MQTT");
    expect(p.clean_start).toBe(true);
    expect(p.keepalive).toBe(30);
    expect(p.sockport).toBe(n.port("tcp"));
    expect(p.expiry_interval).toBe(0);
    expect(Number.isInteger(p.ts) && (p.ts as number) >= before && (p.ts as number) <= Date.now()).toBe(true);
    expect(Number.isInteger(p.connected_at) && (p.connected_at as number) <= (p.ts as number)).toBe(true);

    await c.c.endAsync();
    const off = await watcher.inbox.waitFor((m) => m.topic === `${prefix}${id}/disconnected`, "disconnected");
    const q = JSON.parse(off.payload) as Record<string, unknown>;
    expect(Object.keys(q).sort()).toEqual(["clientid", "reason", "ts", "username"]);
    expect([q.clientid, q.username, q.reason]).toEqual([id, "u1", "normal"]);
    expect(Number.isInteger(q.ts) && (q.ts as number) >= (p.ts as number)).toBe(true);
  });

  it("does not match $SYS topics with # at the first level", async () => {
    const n = node();
    const all = await connect(n, 5);
    await all.c.subscribeAsync("#", { qos: 0 });
    const sys = await connect(n, 5);
    await sys.c.subscribeAsync("$SYS/brokers/+/uptime", { qos: 0 });
    await sys.inbox.next(); // a heartbeat went out after `#` was subscribed
    const marker = `m/${uid()}`;
    await sys.c.publishAsync(marker, "x", { qos: 1 });
    await all.inbox.waitFor((m) => m.topic === marker, "marker");
    expect(all.inbox.all.filter((m) => m.topic.startsWith("$SYS"))).toEqual([]);
  });

  it("refuses $SYS subscriptions from peers that are not local", async () => {
    const n = node();
    const client = (peerHost: string): ClientInfo => clientInfo({ clientId: "g", peerHost });
    const check = (host: string, action: "subscribe" | "publish", topic: string) =>
      n.broker.hooks.fold("client.check_acl", [client(host), action, topic], "allow", "deny");
    expect(check("10.1.2.3", "subscribe", "$SYS/#")).toBe("deny");
    expect(check("10.1.2.3", "subscribe", "$SYS/brokers/+/uptime")).toBe("deny");
    expect(check("10.1.2.3", "subscribe", "$share/g/$SYS/#")).toBe("deny");
    expect(check("2001:db8::1", "subscribe", "$SYS/#")).toBe("deny");
    expect(check("10.1.2.3", "subscribe", "a/#")).toBe("allow");
    expect(check("10.1.2.3", "publish", "$SYS/x")).toBe("allow");
    expect(check("127.0.0.1", "subscribe", "$SYS/#")).toBe("allow");
    expect(check("::1", "subscribe", "$SYS/#")).toBe("allow");
    expect(sysGuard(client("192.168.0.9"), "subscribe", "$SYS/#", "allow")).toMatchObject({ value: "deny" });
    expect(sysGuard(client("127.0.0.1"), "subscribe", "$SYS/#", "allow")).toBeUndefined();
    expect([isLocalPeer("127.0.0.2"), isLocalPeer("::1"), isLocalPeer("128.0.0.1"), isLocalPeer("::2")]).toEqual([
      true,
      true,
      false,
      false,
    ]);
  });
});

describe("client presence nobody would hear of", () => {
  const node = useNode({});

  it("is not built without a $ subscription, a cluster or a callback that acts on system messages", async () => {
    const n = node();
    const b = n.broker;
    // A recorder that declares it ignores system messages (as the retainer, bridges and rules
    // do) but notes every presence message that reaches message.publish.
    const built: string[] = [];
    b.hooks.add(
      "message.publish",
      (m) => {
        if (m.sys && m.topic.includes("/clients/")) built.push(m.topic.split("/").slice(-2).join("/"));
        return undefined;
      },
      0,
      "test-blind",
      { ignoresSystem: true },
    );
    expect(b.systemAudience()).toBe(false);
    const quiet = await connect(n, 4, { clientId: uid("quiet") });
    await quiet.c.endAsync();
    await waitUntil(() => n.services.metrics.stats()["connections.count"] === 0, "quiet client gone");
    expect(built).toEqual([]);

    // A callback that may act on system messages (one without the option): presence is built.
    b.hooks.add("message.dropped", () => {}, 0, "test-sees");
    expect(b.systemAudience()).toBe(true);
    const heardId = uid("heard");
    const heard = await connect(n, 4, { clientId: heardId });
    await heard.c.endAsync();
    await waitUntil(() => built.length === 2, "connected and disconnected");
    expect(built).toEqual([`${heardId}/connected`, `${heardId}/disconnected`]);
    b.hooks.removeOwner("test-sees");
    expect(b.systemAudience()).toBe(false);

    // A subscription to a $ filter (here a shared one) is an audience while it lasts.
    const watcher = await connect(n, 5);
    await watcher.c.subscribeAsync("$share/g/$SYS/brokers/+/clients/#", { qos: 0 });
    expect(b.systemAudience()).toBe(true);
    await watcher.c.unsubscribeAsync("$share/g/$SYS/brokers/+/clients/#");
    expect(b.systemAudience()).toBe(false);
    await watcher.c.endAsync();
    b.hooks.removeOwner("test-blind");
  });
});
