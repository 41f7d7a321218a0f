// The service layer against real MQTT clients (not an MQTT spec area; the effects it has on clients
// are: DISCONNECT 0x98 Administrative action on kick, MQTT 5.0 section 3.14.2.1): clients
// list / lookup / kick, subscriptions list / subscribe / unsubscribe on behalf of a client, and
// publish reaching a real subscriber at the requested QoS.

import type { IDisconnectPacket } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { barrier, connect, offline, type Proto, persistent, Raw, uid, useNode } from "./helpers.ts";

describe.each([4, 5] as const)("service layer, protocol %i", (v: Proto) => {
  const node = useNode();

  it("clients.list() and lookup() show connected clients and parked sessions", async () => {
    const a = await connect(node(), v, { keepalive: 30 });
    const id = uid("p");
    const b = await connect(node(), v, { clientId: id, ...persistent(v) });
    await b.c.endAsync();
    await offline(node(), id);
    const all = node().services.clients.list();
    const rec = all.find((r) => r.clientid === a.id);
    expect(rec).toMatchObject({ clientid: a.id, connected: true, proto_ver: v, keepalive: 30, proto_name: "MQTT" });
    expect(all.find((r) => r.clientid === id)).toMatchObject({ connected: false });
    expect(node().services.clients.lookup(a.id)).toEqual([rec]);
    expect(node().services.clients.lookup(`${a.id}-none`)).toEqual([]);
  });

  it("clients.kick() disconnects a client (5.0 DISCONNECT 0x98)", async () => {
    const c = await connect(node(), v);
    expect(node().services.clients.kick(c.id)).toBe(true);
    if (v === 5) expect((await c.disconnect).reasonCode).toBe(0x98);
    await c.closed;
    await offline(node(), c.id);
    expect(node().services.clients.kick(`${c.id}-none`)).toBe(false);
  });

  it("kick ends a raw client's connection too", async () => {
    const id = uid("k");
    const { raw } = await Raw.connect(node(), v, { clientId: id });
    node().services.clients.kick(id);
    if (v === 5) expect(((await raw.disconnected()) as IDisconnectPacket).reasonCode).toBe(0x98);
    await raw.closed();
  });

  it("subscriptions.list() shows a client's subscriptions with their QoS", async () => {
    const c = await connect(node(), v);
    const topic = `api/${uid()}/+`;
    await c.c.subscribeAsync(topic, { qos: 2 });
    const mine = node()
      .services.subscriptions.list()
      .filter((s) => s.clientid === c.id);
    expect(mine).toEqual([{ clientid: c.id, node: expect.any(String), topic, qos: 2 }]);
  });

  it("subscriptions.subscribe() / unsubscribe() act for the client", async () => {
    const c = await connect(node(), v);
    const topic = `api/${uid()}`;
    await c.c.subscribeAsync(`${topic}/marker`, { qos: 1 });
    expect(node().services.subscriptions.subscribe(c.id, topic, 1)).toBe("ok");
    expect(node().services.subscriptions.subscribe(`${c.id}-none`, topic, 1)).toBe("client_not_online");
    expect(node().services.subscriptions.subscribe(c.id, "a/#/b", 1)).toBe("bad_topic");
    const pub = await connect(node(), v);
    await pub.c.publishAsync(topic, "via-api", { qos: 1 });
    const m = await c.inbox.next();
    expect([m.topic, m.payload, m.packet.qos]).toEqual([topic, "via-api", 1]);
    expect(node().services.subscriptions.unsubscribe(c.id, topic)).toBe("ok");
    await pub.c.publishAsync(topic, "after", { qos: 1 });
    expect(await barrier(pub, c, `${topic}/marker`, 1)).toEqual([]);
  });

  it("publish.publish() reaches a real subscriber", async () => {
    const c = await connect(node(), v);
    const topic = `api/${uid()}`;
    await c.c.subscribeAsync(topic, { qos: 2 });
    const out = node().services.publish.publish({ topic, payload: "from-api", qos: 1 });
    expect(out).toMatchObject({ ok: true, deliveries: 1 });
    const m = await c.inbox.next();
    expect([m.topic, m.payload, m.packet.qos]).toEqual([topic, "from-api", 1]);
    expect(node().services.publish.publish({ topic: "bad/+", payload: "x" })).toEqual({
      ok: false,
      error: "bad_topic",
    });
  });

  it("publish.publish() with retain stores the message for later subscribers", async () => {
    const topic = `api/${uid()}`;
    expect(node().services.publish.publish({ topic, payload: "kept", qos: 0, retain: true }).ok).toBe(true);
    const c = await connect(node(), v);
    await c.c.subscribeAsync(topic, { qos: 1 });
    const m = await c.inbox.next();
    expect([m.payload, m.packet.retain]).toEqual(["kept", true]);
  });
});
