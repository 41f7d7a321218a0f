// Both management listeners (management.listener.http and .http_v2) serve /status, /api/v2,
// /api/v3 and /api/v4 over real HTTP; a listener set `off` is not bound.

import { describe, expect, it } from "vitest";
import { startTestNode } from "../helpers/node.ts";
import { connect, expectError, http, uid, useNode } from "./helpers.ts";

describe("management listeners over real HTTP", () => {
  const node = useNode();

  it("binds two distinct ports", () => {
    const a = node().managementPort("http");
    const b = node().managementPort("http_v2");
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
    expect(a).not.toBe(b);
  });

  it.each(["http", "http_v2"] as const)("%s serves /status, v2, v3 and v4", async (port) => {
    const s = await http(node(), port, "GET", "/status", { auth: null });
    expect(s.status).toBe(200);
    expect(s.headers.get("content-type")).toMatch(/^text\/plain/);
    expect(s.text).toMatch(/^Node .+ is started\nsvc is running$/);
    for (const path of ["/api/v3/brokers", "/api/v4/brokers"]) {
      const a = await http(node(), port, "GET", path);
      expect(a.status, path).toBe(200);
      expect(a.headers.get("content-type")).toMatch(/^application\/json/);
      expect(a.body.data[0].node).toBe(node().services.nodes.local);
    }
    const v2 = await http(node(), port, "GET", "/api/v2/management/nodes");
    expect(v2.body.result[0].name).toBe(node().services.nodes.local);
    const denied = await http(node(), port, "GET", "/api/v3/brokers", { auth: null });
    expectError(denied, 401, 104);
    expect(denied.headers.get("www-authenticate")).toMatch(/^Basic/);
    expectError(await http(node(), port, "GET", "/api/v3/brokers", { auth: ["admin", "bad"] }), 401, 103);
    const doc = await http(node(), port, "GET", "/api/v4/openapi.json", { auth: null });
    expect(doc.status).toBe(200);
  });

  it.each(["http", "http_v2"] as const)("%s: publish over HTTP reaches a real MQTT subscriber", async (port) => {
    const sub = await connect(node(), 4);
    const topic = `port/${uid()}`;
    await sub.c.subscribeAsync(topic, { qos: 1 });
    const a = await http(node(), port, "POST", "/api/v4/mqtt/publish", {
      body: { topic, payload: `via ${port}`, qos: 1, clientid: "http-test" },
    });
    expect(a.body).toEqual({ code: 0 });
    const m = await sub.inbox.next();
    expect([m.topic, m.payload, m.packet.qos]).toEqual([topic, `via ${port}`, 1]);
  });

  it("the management listeners appear in /listeners with their bound address", async () => {
    const a = await http(node(), "http", "GET", `/api/v3/nodes/${node().services.nodes.local}/listeners`);
    const mgmt = a.body.data.filter((l: { protocol: string }) => l.protocol === "http:management");
    expect(mgmt.map((l: { listen_on: string }) => l.listen_on).sort()).toEqual(
      [`127.0.0.1:${node().managementPort("http")}`, `127.0.0.1:${node().managementPort("http_v2")}`].sort(),
    );
    const self = mgmt.find((l: { listen_on: string }) => l.listen_on.endsWith(`:${node().managementPort("http")}`));
    expect(self.current_conns).toBeGreaterThanOrEqual(1);
    expect(self.max_conns).toBeGreaterThan(0);
  });
});

describe("a management listener set off", () => {
  it("is not bound, and the other still serves", async () => {
    const n = await startTestNode({ set: { "management.listener.http_v2": "off" } });
    try {
      expect(n.managementPort("http_v2")).toBeUndefined();
      expect((await http(n, "http", "GET", "/api/v3/brokers")).status).toBe(200);
      const ls = n.listenerInfo().length;
      const a = await http(n, "http", "GET", "/api/v3/listeners");
      expect(a.body.data[0].listeners).toHaveLength(ls + 1);
    } finally {
      await n.close();
    }
  });
});
