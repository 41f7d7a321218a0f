// Topic names and filters (MQTT 3.1.1 section 4.7, 3.8.3, 3.9.3; MQTT 5.0 sections 4.7, 3.8.3,
// 3.9.3, 3.10, 3.11): the `+` and `#` wildcards [MQTT-4.7.1-1..3], topics starting with `$` not
// matched by filters starting with a wildcard [MQTT-4.7.2-1], invalid filters refused per filter
// in SUBACK (3.1.1 0x80, 5.0 0x8F) [MQTT-3.8.4-6], mqtt.max_topic_levels,
// mqtt.wildcard_subscription = false (5.0 0xA2 and Wildcard Subscription Available = 0), UNSUBACK
// codes (5.0 0x11 no subscription existed).

import type { IDisconnectPacket, IPubackPacket, ISubackPacket, IUnsubackPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { barrier, connect, type Proto, Raw, uid, useNode } from "./helpers.ts";

describe.each([4, 5] as const)("topic matching, protocol %i", (v: Proto) => {
  const node = useNode();

  const cases: [string, string[], string[]][] = [
    ["a/+/c", ["a/b/c", "a//c"], ["a/c", "a/b/b/c", "a/b/c/d"]],
    ["+", ["a", ""], ["a/b", "/a"]],
    ["+/+", ["a/b", "/a"], ["a", "a/b/c"]],
    ["a/#", ["a", "a/b", "a/b/c"], ["b/a", "ab"]],
    ["#", ["a", "a/b", "/x"], []],
  ];

  it.each(cases)("filter %s matches %j and not %j", async (filter, yes, no) => {
    const base = uid("t");
    const prefixed = (f: string) => (f === "#" ? `${base}/#` : `${base}/${f}`);
    const topics = (ts: string[]) => ts.map((t) => `${base}/${t}`);
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(prefixed(filter), { qos: 1 });
    await sub.c.subscribeAsync(`${base}-marker`, { qos: 1 });
    const pub = await connect(node(), v);
    for (const t of [...topics(no), ...topics(yes)]) await pub.c.publishAsync(t, t, { qos: 1 });
    const got = await barrier(pub, sub, `${base}-marker`);
    expect([...got].sort()).toEqual(topics(yes).sort());
  });

  it("does not match $SYS topics with # or +/... but with $SYS/# [MQTT-4.7.2-1]", async () => {
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync("#", { qos: 0 });
    await sub.c.subscribeAsync("+/x", { qos: 0 });
    const sys = await connect(node(), v);
    await sys.c.subscribeAsync("$SYS/#", { qos: 0 });
    node().services.publish.publish({ topic: "$SYS/x", payload: "sys", qos: 0 });
    // The node's own retained $SYS topics ($SYS/brokers...) may arrive first.
    expect((await sys.inbox.waitFor((m) => m.topic === "$SYS/x")).payload).toBe("sys");
    const marker = `m/${uid()}`;
    node().services.publish.publish({ topic: marker, payload: "marker", qos: 0 });
    await sub.inbox.waitFor((m) => m.payload === "marker");
    expect(sub.inbox.all.filter((m) => m.topic.startsWith("$"))).toEqual([]);
  });

  it("refuses invalid filters per filter in SUBACK (3.1.1 0x80, 5.0 0x8F)", async () => {
    const { raw } = await Raw.connect(node(), v);
    const bad = ["a/#/b", "a/b#", "a+", "+a/b", "#/a", "$share/g", "$share//a", "$share/g+/a"];
    const ok = `ok/${uid()}/+`;
    const ack = await raw.subscribe([...bad.map((topic) => ({ topic, qos: 1 as const })), { topic: ok, qos: 1 }]);
    const fail = v === 5 ? 0x8f : 0x80;
    expect(ack.granted).toEqual([...bad.map(() => fail), 1]);
    expect(await raw.barrier()).toEqual([]);
  });

  it("answers UNSUBSCRIBE for each filter (5.0: 0x00 or 0x11) [MQTT-3.10.4-5]", async () => {
    const { raw } = await Raw.connect(node(), v);
    const f = `un/${uid()}`;
    await raw.subscribe(f, 1);
    raw.send({ cmd: "unsubscribe", messageId: 5, unsubscriptions: [f, `${f}/none`] });
    const ack = (await raw.next("unsuback")) as IUnsubackPacket;
    expect(ack.messageId).toBe(5);
    if (v === 5) expect(ack.granted).toEqual([0x00, 0x11]);
  });
});

describe.each([4, 5] as const)("topic limits, protocol %i", (v: Proto) => {
  const node = useNode({ "mqtt.max_topic_levels": "3" });

  it("refuses a filter with more than mqtt.max_topic_levels levels", async () => {
    const { raw } = await Raw.connect(node(), v);
    const ack = await raw.subscribe([
      { topic: "a/b/c/d", qos: 1 },
      { topic: "a/b/c", qos: 1 },
    ]);
    expect(ack.granted[0]).toBeGreaterThanOrEqual(0x80);
    expect(ack.granted[1]).toBe(1);
  });

  it("does not deliver a publish to a topic with too many levels", async () => {
    const base = uid("l");
    const sub = await connect(node(), v);
    await sub.c.subscribeAsync(`${base}/#`, { qos: 1 });
    const { raw } = await Raw.connect(node(), v);
    raw.send({
      cmd: "publish",
      topic: `${base}/b/c/d`,
      payload: "deep",
      qos: 1,
      messageId: 3,
      dup: false,
      retain: false,
    });
    if (v === 5) {
      const ack = (await raw.next((p) => p.cmd === "puback" || p.cmd === "disconnect")) as IPubackPacket;
      expect(ack.reasonCode).toBe(0x90);
    } else await raw.closed();
    const pub = await connect(node(), v);
    expect(await barrier(pub, sub, `${base}/b`)).toEqual([]);
  });
});

describe.each([4, 5] as const)("mqtt.wildcard_subscription = false, protocol %i", (v: Proto) => {
  const node = useNode({ "mqtt.wildcard_subscription": "false" });

  it("accepts plain filters", async () => {
    const { raw } = await Raw.connect(node(), v);
    expect((await raw.subscribe(`w/${uid()}`, 1)).granted).toEqual([1]);
  });

  it.runIf(v === 4)("3.1.1: refuses wildcard filters with 0x80", async () => {
    const { raw } = await Raw.connect(node(), 4);
    const ack = await raw.subscribe([
      { topic: "w/+", qos: 1 },
      { topic: "w/#", qos: 1 },
      { topic: `w/${uid()}`, qos: 1 },
    ]);
    expect(ack.granted).toEqual([0x80, 0x80, 1]);
  });

  // BUG: CONNACK says Wildcard Subscription Available = 0, yet a wildcard SUBSCRIBE gets SUBACK 0xA2
  // and the connection stays open. Having announced 0, it is a Protocol Error: DISCONNECT 0xA2 and
  // close (5.0 3.2.2.3.11, [MQTT-4.13.1-1]); SUBACK 0xA2 is only for a server that announces 1.
  it.runIf(v === 5)("5.0: announces Wildcard Subscription Available = 0 and disconnects with 0xA2", async () => {
    const { raw, connack } = await Raw.connect(node(), 5);
    expect(connack.properties?.wildcardSubscriptionAvailable).toBe(false);
    raw.send({ cmd: "subscribe", messageId: 9, subscriptions: [{ topic: "w/+", qos: 1 }] });
    const p = await raw.next((x) => x.cmd === "suback" || x.cmd === "disconnect");
    expect(p).toMatchObject({ cmd: "disconnect", reasonCode: 0xa2 });
    await raw.closed();
  });

  it.runIf(v === 5)("5.0: a wildcard filter is refused with 0xA2 (SUBACK or DISCONNECT)", async () => {
    const { raw } = await Raw.connect(node(), 5);
    raw.send({ cmd: "subscribe", messageId: 9, subscriptions: [{ topic: "w/#", qos: 1 }] });
    const p = (await raw.next((x) => x.cmd === "suback" || x.cmd === "disconnect")) as
      | ISubackPacket
      | IDisconnectPacket;
    expect(p.cmd === "suback" ? p.granted : [p.reasonCode]).toEqual([0xa2]);
  });
});
