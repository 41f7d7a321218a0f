// MQTT 5.0 PUBLISH properties and subscription options (MQTT 5.0 sections 3.3.2.3, 3.8.3.1,
// 3.3.4): Payload Format Indicator, Content Type, Response Topic, Correlation Data and User
// Properties forwarded unaltered [MQTT-3.3.2-4, MQTT-3.3.2-15..20], Message Expiry Interval
// counting down while queued [MQTT-3.3.2-6] and expired messages not delivered [MQTT-3.3.2-5],
// Subscription Identifiers [MQTT-3.3.4-3..5], No Local [MQTT-3.8.3-3] (and a 3.1.1 client, which
// has no No Local, does get its own messages while mqtt.ignore_loop_deliver is off), Topic Alias
// from the client [MQTT-3.3.2-7..12] and to the client [MQTT-3.3.2-10/11].

import type { IDisconnectPacket, IPublishPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import type { TestNode } from "../helpers/node.ts";
import { barrier, connect, offline, persistent, Raw, uid, useNode, waitUntil } from "./helpers.ts";

/**
 * Waits until `s` seconds have passed on the broker's own clock: a session with that expiry,
 * closed now, is discarded by the broker's sweep no earlier than that.
 */
async function brokerSeconds(node: TestNode, s: number): Promise<void> {
  const id = uid("clock");
  const { raw } = await Raw.connect(node, 5, { clientId: id, properties: { sessionExpiryInterval: s } });
  raw.destroy();
  await offline(node, id);
  await waitUntil(() => node.services.clients.lookup(id).length === 0, "clock session expiry", s * 1000 + 3000);
}

const ids = (p: IPublishPacket): number[] => {
  const x = p.properties?.subscriptionIdentifier as number | number[] | undefined;
  return x === undefined ? [] : ([] as number[]).concat(x);
};

describe("5.0 PUBLISH properties", () => {
  const node = useNode();

  it("forwards the application properties unaltered", async () => {
    const topic = `pp/${uid()}`;
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), 5);
    const properties = {
      payloadFormatIndicator: true,
      contentType: "text/plain",
      responseTopic: "reply/here",
      correlationData: Buffer.from([1, 2, 3]),
      userProperties: { a: "1", b: ["x", "y"] },
    };
    await pub.c.publishAsync(topic, "hello", { qos: 1, properties });
    const p = (await sub.inbox.next()).packet.properties;
    expect(p?.payloadFormatIndicator).toBe(true);
    expect(p?.contentType).toBe("text/plain");
    expect(p?.responseTopic).toBe("reply/here");
    expect(p?.correlationData).toEqual(Buffer.from([1, 2, 3]));
    expect(p?.userProperties).toEqual({ a: "1", b: ["x", "y"] });
  });

  it("sends the Message Expiry Interval of a message delivered at once", async () => {
    const topic = `exp/${uid()}`;
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "e", { qos: 1, properties: { messageExpiryInterval: 60 } });
    const e = (await sub.inbox.next()).packet.properties?.messageExpiryInterval as number;
    expect(e).toBeGreaterThanOrEqual(59);
    expect(e).toBeLessThanOrEqual(60);
  });

  it("counts the Message Expiry Interval down while the message is queued [MQTT-3.3.2-6]", async () => {
    const id = uid("x");
    const topic = `exp/${id}`;
    const a = await connect(node(), 5, { clientId: id, ...persistent(5) });
    await a.c.subscribeAsync(topic, { qos: 1 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "aging", { qos: 1, properties: { messageExpiryInterval: 3 } });
    await brokerSeconds(node(), 1);
    const b = await connect(node(), 5, { clientId: id, ...persistent(5) });
    const m = await b.inbox.next();
    expect(m.payload).toBe("aging");
    expect(m.packet.properties?.messageExpiryInterval).toBeLessThanOrEqual(2);
    expect(m.packet.properties?.messageExpiryInterval).toBeGreaterThanOrEqual(1);
  });

  it("does not deliver a queued message whose expiry has passed [MQTT-3.3.2-5]", async () => {
    const id = uid("x");
    const topic = `exp/${id}`;
    const a = await connect(node(), 5, { clientId: id, ...persistent(5) });
    await a.c.subscribeAsync(topic, { qos: 1 });
    await a.c.endAsync();
    await offline(node(), id);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "stale", { qos: 1, properties: { messageExpiryInterval: 1 } });
    await pub.c.publishAsync(topic, "fresh", { qos: 1 });
    await brokerSeconds(node(), 1);
    const b = await connect(node(), 5, { clientId: id, ...persistent(5) });
    expect((await b.inbox.next()).payload).toBe("fresh");
    expect(await barrier(pub, b, topic, 1)).toEqual([]);
    expect(b.inbox.payloads()).not.toContain("stale");
  });

  it("sends the Subscription Identifier of each matching subscription [MQTT-3.3.4-3..5]", async () => {
    const base = `sid/${uid()}`;
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(`${base}/+`, { qos: 1, properties: { subscriptionIdentifier: 1 } });
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1, properties: { subscriptionIdentifier: 2 } });
    await sub.c.subscribeAsync(`${base}/plain/x`, { qos: 1 });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(`${base}/a`, "both", { qos: 1 });
    await pub.c.publishAsync(`${base}/plain/x`, "noid", { qos: 1 });
    await barrier(pub, sub, `${base}/marker`);
    const both = sub.inbox.all.filter((m) => m.payload === "both").flatMap((m) => ids(m.packet));
    expect(both.sort()).toEqual([1, 2]);
    const noid = sub.inbox.all.filter((m) => m.payload === "noid");
    expect(noid.flatMap((m) => ids(m.packet))).toEqual([2]);
  });

  it("No Local: a client's own messages are not sent back to it [MQTT-3.8.3-3]", async () => {
    const topic = `nl/${uid()}`;
    const self = await connect(node(), 5);
    await self.c.subscribeAsync(topic, { qos: 1, nl: true });
    await self.c.publishAsync(topic, "own", { qos: 1 });
    const other = await connect(node(), 5);
    await other.c.publishAsync(topic, "other", { qos: 1 });
    expect(await barrier(other, self, topic)).toEqual(["other"]);
  });

  it.each([4, 5] as const)(
    "protocol %i without No Local gets its own messages (ignore_loop_deliver off)",
    async (v) => {
      const topic = `loop/${uid()}`;
      const self = await connect(node(), v);
      await self.c.subscribeAsync(topic, { qos: 1 });
      await self.c.publishAsync(topic, "own", { qos: 1 });
      expect((await self.inbox.next()).payload).toBe("own");
    },
  );
});

describe("5.0 topic aliases", () => {
  const node = useNode({ "mqtt.max_topic_alias": "10" });

  it("resolves a Topic Alias sent by the client [MQTT-3.3.2-7..9]", async () => {
    const topic = `ta/${uid()}`;
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const { raw, connack } = await Raw.connect(node(), 5);
    expect(connack.properties?.topicAliasMaximum).toBe(10);
    const publish = (t: string, payload: string, messageId: number): IPublishPacket => ({
      cmd: "publish",
      topic: t,
      payload,
      qos: 1,
      messageId,
      dup: false,
      retain: false,
      properties: { topicAlias: 3 },
    });
    raw.send(publish(topic, "set", 1));
    await raw.next("puback");
    raw.send(publish("", "use", 2));
    await raw.next("puback");
    const got = await sub.inbox.take(2);
    expect(got.map((m) => [m.topic, m.payload])).toEqual([
      [topic, "set"],
      [topic, "use"],
    ]);
  });

  it("disconnects a client that sends a Topic Alias above the maximum with 0x94 [MQTT-3.3.2-9]", async () => {
    const { raw } = await Raw.connect(node(), 5);
    raw.send({
      cmd: "publish",
      topic: "ta/x",
      payload: "",
      qos: 0,
      dup: false,
      retain: false,
      properties: { topicAlias: 11 },
    });
    expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x94);
  });

  it("treats an unknown alias with an empty topic as a Protocol Error (3.3.2.3.4)", async () => {
    const { raw } = await Raw.connect(node(), 5);
    raw.send({
      cmd: "publish",
      topic: "",
      payload: "",
      qos: 0,
      dup: false,
      retain: false,
      properties: { topicAlias: 4 },
    });
    const rc = ((await raw.disconnected()) as IDisconnectPacket).reasonCode;
    expect([0x82, 0x94]).toContain(rc);
  });

  it("uses Topic Aliases towards a client whose Topic Alias Maximum > 0", async () => {
    const topic = `ta/${uid()}`;
    const { raw } = await Raw.connect(node(), 5, { properties: { topicAliasMaximum: 2 } });
    await raw.subscribe(topic, 0);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "1", { qos: 1 });
    await pub.c.publishAsync(topic, "2", { qos: 1 });
    const first = await raw.nextPublish();
    const second = await raw.nextPublish();
    const alias = first.properties?.topicAlias as number;
    expect(first.topic).toBe(topic);
    expect(alias).toBeGreaterThanOrEqual(1);
    expect(alias).toBeLessThanOrEqual(2);
    expect([second.topic, second.properties?.topicAlias, second.payload.toString()]).toEqual(["", alias, "2"]);
  });

  it("sends no Topic Alias to a client that did not allow any [MQTT-3.3.2-10]", async () => {
    const topic = `ta/${uid()}`;
    const { raw } = await Raw.connect(node(), 5);
    await raw.subscribe(topic, 0);
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(topic, "1", { qos: 1 });
    await pub.c.publishAsync(topic, "2", { qos: 1 });
    for (const p of [await raw.nextPublish(), await raw.nextPublish()]) {
      expect([p.topic, p.properties?.topicAlias]).toEqual([topic, undefined]);
    }
  });
});
