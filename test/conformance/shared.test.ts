// Shared subscriptions (MQTT 5.0 section 4.8.2; `$queue/` and their use by 3.1.1 clients are
// broker extensions): each message goes to exactly one session of a group, every group gets its
// copy, non-shared subscribers are unaffected; strategies round_robin, sticky and hash
// (broker.shared_subscription_strategy); a QoS 1 message the chosen member never acknowledged is
// sent to another member when that member's session ends (4.8.2: "If the Server is in the process
// of sending a QoS 1 message to its chosen subscribing Client and the connection to that Client
// breaks ... the Server MAY wait ... or send it to another subscribing Client"); No Local on a
// shared subscription is a Protocol Error [MQTT-3.8.3-4].

import type { IDisconnectPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import type { TestNode } from "../helpers/node.ts";
import { barrier, type Client, connect, type Proto, Raw, uid, useNode, waitUntil } from "./helpers.ts";

/** Members subscribed to `filter`, each also on a private marker topic for barriers. */
async function members(node: TestNode, v: Proto, filter: string, n: number): Promise<Client[]> {
  const out: Client[] = [];
  for (let i = 0; i < n; i++) {
    const c = await connect(node, v);
    await c.c.subscribeAsync([filter, `own/${c.id}`], { qos: 1 });
    out.push(c);
  }
  return out;
}

/** Publishes `count` messages m0..m(count-1) and returns, per member, the indexes it received. */
async function spread(pub: Client, topic: string, ms: Client[], count: number): Promise<number[][]> {
  const tag = uid("p");
  for (let i = 0; i < count; i++) await pub.c.publishAsync(topic, `${tag}-${i}`, { qos: 1 });
  const mine = (c: Client) => c.inbox.all.filter((m) => m.payload.startsWith(`${tag}-`));
  await waitUntil(() => ms.reduce((n, c) => n + mine(c).length, 0) >= count, `${count} shared deliveries`);
  for (const c of ms) await barrier(pub, c, `own/${c.id}`);
  return ms.map((c) => mine(c).map((m) => Number(m.payload.slice(tag.length + 1))));
}

describe.each([4, 5] as const)("shared subscriptions, protocol %i", (v: Proto) => {
  const node = useNode();

  it.each(["$share/g/", "$queue/"])("%s: each message goes to exactly one member", async (prefix) => {
    const topic = `sh/${uid()}`;
    const ms = await members(node(), v, `${prefix}${topic}`, 3);
    const plain = await connect(node(), v);
    await plain.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), v);
    const got = await spread(pub, topic, ms, 12);
    expect(got.flat().sort((a, b) => a - b)).toEqual([...Array(12).keys()]);
    expect(plain.inbox.all).toHaveLength(12);
  });

  it("every group gets its own copy", async () => {
    const topic = `sh/${uid()}`;
    const g1 = await members(node(), v, `$share/g1/${topic}`, 2);
    const g2 = await members(node(), v, `$share/g2/${topic}`, 2);
    const pub = await connect(node(), v);
    for (let i = 0; i < 4; i++) await pub.c.publishAsync(topic, `m${i}`, { qos: 1 });
    await waitUntil(() => g1[0].inbox.all.length + g1[1].inbox.all.length === 4, "group 1");
    await waitUntil(() => g2[0].inbox.all.length + g2[1].inbox.all.length === 4, "group 2");
    for (const c of [...g1, ...g2]) await barrier(pub, c, `own/${c.id}`);
    const count = (g: Client[]) =>
      g
        .flatMap((c) => c.inbox.payloads())
        .filter((p) => /^m\d$/.test(p))
        .sort();
    expect(count(g1)).toEqual(["m0", "m1", "m2", "m3"]);
    expect(count(g2)).toEqual(["m0", "m1", "m2", "m3"]);
  });

  it("redispatches an unacknowledged QoS 1 message when the member's session ends", async () => {
    const topic = `sh/${uid()}`;
    const { raw } = await Raw.connect(node(), v, { clean: true });
    await raw.subscribe(`$share/g/${topic}`, 1);
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "orphan", { qos: 1 });
    expect((await raw.nextPublish()).payload.toString()).toBe("orphan");
    const [other] = await members(node(), v, `$share/g/${topic}`, 1);
    raw.destroy();
    const m = await other.inbox.next();
    expect([m.topic, m.payload, m.packet.qos]).toEqual([topic, "orphan", 1]);
  });

  it.runIf(v === 5)("No Local on a shared subscription is a Protocol Error [MQTT-3.8.3-4]", async () => {
    const { raw } = await Raw.connect(node(), 5);
    raw.send({ cmd: "subscribe", messageId: 3, subscriptions: [{ topic: `$share/g/${uid()}`, qos: 1, nl: true }] });
    expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x82);
  });
});

describe.each([4, 5] as const)("strategy round_robin, protocol %i", (v: Proto) => {
  const node = useNode({ "broker.shared_subscription_strategy": "round_robin" });

  it("alternates between the members", async () => {
    const topic = `rr/${uid()}`;
    const ms = await members(node(), v, `$share/g/${topic}`, 2);
    const pub = await connect(node(), v);
    const [a, b] = await spread(pub, topic, ms, 6);
    const evens = [0, 2, 4];
    const odds = [1, 3, 5];
    expect([a, b].sort((x, y) => x[0] - y[0])).toEqual([evens, odds]);
  });
});

describe.each([4, 5] as const)("strategy sticky, protocol %i", (v: Proto) => {
  const node = useNode({ "broker.shared_subscription_strategy": "sticky" });

  it("keeps sending to the same member", async () => {
    const topic = `st/${uid()}`;
    const ms = await members(node(), v, `$share/g/${topic}`, 3);
    const pub = await connect(node(), v);
    const got = await spread(pub, topic, ms, 8);
    expect(got.map((x) => x.length).sort()).toEqual([0, 0, 8]);
  });
});

describe.each([4, 5] as const)("strategy hash, protocol %i", (v: Proto) => {
  const node = useNode({ "broker.shared_subscription_strategy": "hash" });

  it("sends every message of one publisher to the same member", async () => {
    const topic = `hs/${uid()}`;
    const ms = await members(node(), v, `$share/g/${topic}`, 3);
    for (let p = 0; p < 2; p++) {
      const pub = await connect(node(), v);
      const got = await spread(pub, `${topic}`, ms, 6);
      expect(got.map((x) => x.length).sort()).toEqual([0, 0, 6]);
    }
  });
});

describe("mqtt.shared_subscription = false", () => {
  const node = useNode({ "mqtt.shared_subscription": "false" });

  it("3.1.1: refuses a shared filter with 0x80", async () => {
    const { raw } = await Raw.connect(node(), 4);
    expect((await raw.subscribe(`$share/g/${uid()}`, 1)).granted).toEqual([0x80]);
  });

  // BUG: CONNACK says Shared Subscription Available = 0, yet a shared SUBSCRIBE gets SUBACK 0x9E
  // and the connection stays open. Having announced 0, it is a Protocol Error: DISCONNECT 0x9E and
  // close (5.0 3.2.2.3.13, [MQTT-4.13.1-1]).
  it("5.0: announces Shared Subscription Available = 0 and disconnects with 0x9E", async () => {
    const { raw, connack } = await Raw.connect(node(), 5);
    expect(connack.properties?.sharedSubscriptionAvailable).toBe(false);
    raw.send({ cmd: "subscribe", messageId: 4, subscriptions: [{ topic: `$share/g/${uid()}`, qos: 1 }] });
    const p = await raw.next((x) => x.cmd === "suback" || x.cmd === "disconnect");
    expect(p).toMatchObject({ cmd: "disconnect", reasonCode: 0x9e });
    await raw.closed();
  });
});
