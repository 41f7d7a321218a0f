// Metrics and statistics move exactly as a scripted session says: connect, subscribe, publish
// QoS 0/1/2, a drop on a full offline queue (zone.external.max_mqueue_len = 2), disconnect. Every
// metric's delta is compared (a counter that moves when it should not fails the test too), bytes
// against what the client sockets wrote and read, and statistics `.count`/`.max`.

import type { Socket } from "node:net";
import { describe, expect, it } from "vitest";
import { type Client, connect, offline, persistent, uid, useNode, waitUntil } from "../conformance/helpers.ts";
import type { TestNode } from "../helpers/node.ts";

function deltas(before: Record<string, number>, after: Record<string, number>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(after)) if (v !== before[k]) out[k] = v - (before[k] ?? 0);
  return out;
}

const socketOf = (c: Client): Socket => (c.c as unknown as { stream: Socket }).stream;

describe("metrics and statistics of a scripted session", () => {
  const node = useNode({ "zone.external.max_mqueue_len": "2" });
  const metric = (n: TestNode, k: string) => n.services.metrics.metrics()[k];
  const stat = (n: TestNode, k: string) => (n.services.metrics.stats() as Record<string, number>)[k];

  it("counts every packet, message and drop once, at the point it happens", async () => {
    const n = node();
    const m0 = n.services.metrics.metrics();
    const s0 = n.services.metrics.stats();
    const topic = `ms/${uid()}`;

    const sub = await connect(n, 4, { clean: false, clientId: uid("sub") });
    await sub.c.subscribeAsync(topic, { qos: 2 });
    const pub = await connect(n, 4);
    expect(stat(n, "connections.count")).toBe(2);
    expect(stat(n, "channels.count")).toBe(2);
    expect(stat(n, "sessions.count")).toBe(2);
    expect(stat(n, "sessions.persistent.count")).toBe(1);
    expect(stat(n, "subscriptions.count")).toBe(1);
    expect(stat(n, "suboptions.count")).toBe(1);
    expect(stat(n, "subscribers.count")).toBe(1);
    expect(stat(n, "routes.count")).toBe(1);
    expect(stat(n, "topics.count")).toBe(1);

    await pub.c.publishAsync(topic, "q0", { qos: 0 });
    await pub.c.publishAsync(topic, "q1", { qos: 1 });
    await pub.c.publishAsync(topic, "q2", { qos: 2 });
    expect((await sub.inbox.take(3)).map((m) => [m.payload, m.packet.qos])).toEqual([
      ["q0", 0],
      ["q1", 1],
      ["q2", 2],
    ]);
    // The subscriber's PUBACK and PUBCOMP are on their way: wait until the broker has them.
    await waitUntil(() => metric(n, "messages.acked") - m0["messages.acked"] === 2, "acks of q1 and q2");

    await sub.c.endAsync();
    await waitUntil(() => stat(n, "connections.count") === 1, "subscriber gone");
    // Offline persistent session, queue of 2: the third message pushes the oldest out.
    for (const p of ["o1", "o2", "o3"]) await pub.c.publishAsync(topic, p, { qos: 1 });
    await pub.c.endAsync();
    await waitUntil(() => stat(n, "connections.count") === 0, "publisher gone");

    const d = deltas(m0, n.services.metrics.metrics());
    const bytesIn = socketOf(sub).bytesWritten + socketOf(pub).bytesWritten;
    const bytesOut = socketOf(sub).bytesRead + socketOf(pub).bytesRead;
    expect([d["bytes.received"], d["bytes.sent"]]).toEqual([bytesIn, bytesOut]);
    delete d["bytes.received"];
    delete d["bytes.sent"];
    expect(d).toEqual({
      // sub: CONNECT SUBSCRIBE PUBACK PUBREC PUBCOMP DISCONNECT; pub: CONNECT PUBLISH x6 PUBREL DISCONNECT
      "packets.received": 15,
      // sub: CONNACK SUBACK PUBLISH x3 PUBREL; pub: CONNACK PUBACK x4 PUBREC PUBCOMP
      "packets.sent": 13,
      "packets.connect.received": 2,
      "packets.connack.sent": 2,
      "auth.mqtt.anonymous": 2,
      // The default ACL file allows localhost everything: 1 subscribe + 6 publishes checked, of
      // which the 5 repeated publish checks on one topic come from the client's ACL cache.
      "client.acl.allow": 7,
      "client.acl.cache_hit": 5,
      "packets.subscribe.received": 1,
      "packets.suback.sent": 1,
      "packets.publish.received": 6,
      "packets.publish.sent": 3,
      "packets.puback.received": 1,
      "packets.puback.sent": 4,
      "packets.pubrec.received": 1,
      "packets.pubrec.sent": 1,
      "packets.pubrel.received": 1,
      "packets.pubrel.sent": 1,
      "packets.pubcomp.received": 1,
      "packets.pubcomp.sent": 1,
      "packets.disconnect.received": 2,
      "messages.received": 6,
      "messages.qos0.received": 1,
      "messages.qos1.received": 4,
      "messages.qos2.received": 1,
      "messages.sent": 3,
      "messages.qos0.sent": 1,
      "messages.qos1.sent": 1,
      "messages.qos2.sent": 1,
      "messages.delivered": 3,
      "messages.acked": 2,
      // The 6 from the publisher. The 4 presence messages ($SYS .../connected, .../disconnected
      // x2), which nobody subscribes to, are system messages: counted neither here nor as dropped.
      "messages.publish": 6,
      // The one pushed out of the full queue.
      "messages.dropped": 1,
      "delivery.dropped": 1,
      "delivery.dropped.queue_full": 1,
    });

    const s = n.services.metrics.stats();
    expect(deltas(s0, s)).toEqual({
      "connections.max": 2,
      "channels.max": 2,
      "sessions.count": 1,
      "sessions.max": 2,
      "sessions.persistent.count": 1,
      "sessions.persistent.max": 1,
      "subscriptions.count": 1,
      "subscriptions.max": 1,
      "suboptions.count": 1,
      "suboptions.max": 1,
      "subscribers.count": 1,
      "subscribers.max": 1,
      "routes.count": 1,
      "routes.max": 1,
      "topics.count": 1,
      "topics.max": 1,
    });
    expect(n.sys.stats.get("connections")).toEqual({ count: 0, max: 2 });
    // The offline session still holds the two newest messages.
    expect(n.broker.sessions.lookup(sub.id)?.mqueue.length).toBe(2);
  });

  it("leaves system messages ($SYS topics, the node's own) out of messages.publish and messages.dropped", async () => {
    const n = node();
    const m0 = n.services.metrics.metrics();
    const subs0 = stat(n, "subscriptions.count");
    // A client on 127.0.0.1 may publish and subscribe to $SYS/# (the default ACL file).
    const c = await connect(n, 4);
    await c.c.publishAsync(`none/${uid()}`, "nobody", { qos: 1 });
    await c.c.publishAsync(`$SYS/none/${uid()}`, "nobody", { qos: 1 });
    const sysTopic = `$SYS/t/${uid()}`;
    await c.c.subscribeAsync(sysTopic, { qos: 0 });
    await c.c.publishAsync(sysTopic, "somebody", { qos: 1 });
    expect((await c.inbox.take(1)).map((m) => [m.topic, m.payload])).toEqual([[sysTopic, "somebody"]]);
    const d = deltas(m0, n.services.metrics.metrics());
    // Only the publish on `none/...`: the `$SYS/...` ones, and this client's presence messages
    // (built while it holds a `$` subscription), are system messages.
    expect([d["messages.publish"], d["messages.dropped"], d["messages.dropped.no_subscribers"]]).toEqual([1, 1, 1]);
    expect(d["messages.received"]).toBe(3);
    await c.c.endAsync();
    await waitUntil(() => stat(n, "subscriptions.count") === subs0, "the client's session gone");
  });

  it("counts shared subscriptions and retained messages, and keeps each max", async () => {
    const n = node();
    const s0 = n.services.metrics.stats();
    const m0 = n.services.metrics.metrics();
    const t = `sh/${uid()}`;
    const a = await connect(n, 5);
    await a.c.subscribeAsync([`$share/g/${t}`, t], { qos: 0 });
    await a.c.publishAsync(`${t}/r`, "kept", { qos: 1, retain: true });
    let s = n.services.metrics.stats();
    expect(s["subscriptions.shared.count"] - s0["subscriptions.shared.count"]).toBe(1);
    expect(s["subscriptions.count"] - s0["subscriptions.count"]).toBe(2);
    expect(s["retained.count"] - s0["retained.count"]).toBe(1);
    expect(n.services.metrics.metrics()["messages.retained"] - m0["messages.retained"]).toBe(1);
    await a.c.unsubscribeAsync([`$share/g/${t}`, t]);
    s = n.services.metrics.stats();
    expect(s["subscriptions.shared.count"]).toBe(s0["subscriptions.shared.count"]);
    expect(s["subscriptions.shared.max"]).toBeGreaterThanOrEqual(1);
    expect(s["subscriptions.count"]).toBe(s0["subscriptions.count"]);
    expect(s["subscriptions.max"]).toBeGreaterThanOrEqual(s0["subscriptions.count"] + 2);
  });

  it("keeps sessions.persistent and subscribers through every way a session changes", async () => {
    const n = node();
    // The counts are kept as sessions change; a walk over every session is the reference.
    const walk = () => {
      let persistentN = 0;
      let subscribersN = 0;
      for (const s of n.broker.sessions.allSessions()) {
        if (s.expiryInterval > 0) persistentN++;
        if (s.subscriptionCount > 0) subscribersN++;
      }
      return [persistentN, subscribersN];
    };
    const [p0, s0] = walk();
    const expectCounts = (persistentN: number, subscribersN: number) => {
      expect(walk()).toEqual([p0 + persistentN, s0 + subscribersN]);
      expect([stat(n, "sessions.persistent.count"), stat(n, "subscribers.count")]).toEqual(walk());
    };
    const t = `cnt/${uid()}`;

    const a = await connect(n, 5, persistent(5));
    await a.c.subscribeAsync([`${t}/a`, `${t}/b`]);
    const b = await connect(n, 4);
    await b.c.subscribeAsync(`${t}/a`);
    expectCounts(1, 2);
    await b.c.unsubscribeAsync(`${t}/a`);
    expectCounts(1, 1);
    // Takeover, resumed: the same session, counted once.
    const a2 = await connect(n, 5, { ...persistent(5), clientId: a.id });
    await a.closed;
    expectCounts(1, 1);
    // DISCONNECT lowering the expiry to 0 ends the session [MQTT-3.14.2-2 allows lowering].
    await a2.c.endAsync(false, { properties: { sessionExpiryInterval: 0 } });
    await waitUntil(() => n.broker.sessions.lookup(a.id) === undefined, "session of a ended");
    expectCounts(0, 0);

    // Offline until it expires (1 s, on the timer wheel).
    const c = await connect(n, 5, persistent(5, 1));
    await c.c.subscribeAsync(t);
    await c.c.endAsync();
    await offline(n, c.id);
    expectCounts(1, 1);
    await waitUntil(() => n.broker.sessions.lookup(c.id) === undefined, "session of c expired");
    expectCounts(0, 0);

    // Kicked: the persistent session ends with its connection.
    const d = await connect(n, 4, persistent(4));
    await d.c.subscribeAsync(t);
    expectCounts(1, 1);
    expect(n.services.clients.kick(d.id)).toBe(true);
    await d.closed;
    await waitUntil(() => n.broker.sessions.lookup(d.id) === undefined, "session of d ended");
    expectCounts(0, 0);

    // Clean start over a persistent session: the old one goes, the new one has nothing.
    const e = await connect(n, 4, persistent(4));
    await e.c.subscribeAsync(t);
    await e.c.endAsync();
    await offline(n, e.id);
    expectCounts(1, 1);
    const e2 = await connect(n, 4, { clientId: e.id, clean: true });
    expectCounts(0, 0);
    await e2.c.endAsync();
    await b.c.endAsync();
    await waitUntil(() => [e.id, b.id].every((id) => n.broker.sessions.lookup(id) === undefined), "e and b gone");
    expectCounts(0, 0);
  });

  it("lets later features set rules, actions and resources", () => {
    const n = node();
    expect(n.sys.stats.get("rules")).toEqual({ count: 0, max: 0 });
    n.sys.stats.setSource("rules", () => 3);
    n.sys.stats.set("resources", 2);
    n.sys.stats.set("resources", 1);
    const s = n.services.metrics.stats();
    expect([s["rules.count"], s["rules.max"], s["resources.count"], s["resources.max"]]).toEqual([3, 3, 1, 2]);
    n.sys.stats.removeSource("rules");
  });
});
