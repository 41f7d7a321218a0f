// The rule engine end to end on a real node with MQTT.js clients: republish (templates, QoS,
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
// loop guard), events rules, the web hook resource against an HTTP server in the test (method,
// path, headers, body; server down: failures counted and the resource alarm; back: recovers),
// metrics, the rule test, API shapes and errors, storage in the cluster store.

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, req, uid, useNode, waitUntil } from "../api/helpers.ts";
import { barrier } from "../conformance/helpers.ts";
import { markerRule } from "./marker-rule.ts";

interface Hit {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}

const node = useNode();
const v4 = "/api/v4";

async function createRule(body: unknown) {
  const r = await req(node(), "POST", `${v4}/rules`, { body });
  expect(r.status, r.text).toBe(200);
  return r.body.data;
}

describe("republish", () => {
  it("republishes with templates, counts metrics, guards loops", async () => {
    const rule = await createRule({
      rawsql: `SELECT payload.x as x, clientid FROM "rp/#" WHERE x > 1`,
      actions: [
        { name: "republish", params: { target_topic: "out/${clientid}", target_qos: 1, payload_tmpl: "x=${x}" } },
      ],
    });
    expect(rule.id).toMatch(/^rule:[0-9a-f]{8}$/);
    expect(rule.for).toBe("rp/#");
    expect(rule.enabled).toBe(true);
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync("out/#", { qos: 1 });
    const pub = await connect(node(), 4);
    const before = node().broker.metrics.get("rules.matched");
    await pub.c.publishAsync("rp/1", JSON.stringify({ x: 0 }), { qos: 1 });
    await pub.c.publishAsync("rp/1", JSON.stringify({ x: 2 }), { qos: 1 });
    const m = await sub.inbox.next();
    expect(m.topic).toBe(`out/${pub.id}`);
    expect(m.payload).toBe("x=2");
    expect(m.packet.qos).toBe(1);
    await waitUntil(() => node().rules.loadedRule(rule.id)?.actions[0].metrics.success === 1, "action success");
    const got = (await req(node(), "GET", `${v4}/rules/${rule.id}`)).body.data;
    expect(got.metrics[0]).toMatchObject({ matched: 2, passed: 1, no_result: 1, failed: 0 });
    expect(got.actions[0].metrics[0]).toMatchObject({ success: 1, failed: 0 });
    expect(node().broker.metrics.get("rules.matched") - before).toBe(2);
    expect(node().broker.metrics.get("actions.success")).toBeGreaterThanOrEqual(1);
    expect(node().sys.stats.get("rules").count).toBeGreaterThanOrEqual(1);
    // disable: no longer fires
    await req(node(), "PUT", `${v4}/rules/${rule.id}`, { body: { enabled: false } });
    await pub.c.publishAsync("rp/1", JSON.stringify({ x: 5 }), { qos: 1 });
    // A marker through the engine after it: nothing was republished before the marker.
    const mark = await markerRule(node(), `out/${pub.id}`, 1);
    expect(await barrier(pub, sub, mark.topic)).toHaveLength(1);
    await mark.remove();
  });

  it("does not republish its own output again (loop guard)", async () => {
    await createRule({
      rawsql: `SELECT * FROM "loop/#"`,
      actions: [{ name: "republish", params: { target_topic: "loop/again", target_qos: -1 } }],
    });
    const sub = await connect(node(), 4);
    await sub.c.subscribeAsync("loop/#", { qos: 1 });
    const pub = await connect(node(), 4);
    await pub.c.publishAsync("loop/x", "hello", { qos: 1 });
    const got = await sub.inbox.take(2);
    expect(got.map((m) => `${m.topic}:${m.payload}`).sort()).toEqual(["loop/again:hello", "loop/x:hello"]);
    expect(got.find((m) => m.topic === "loop/again")?.packet.qos).toBe(1);
    // Barrier: a marker through the same rule. A second pass of the rule over its own output
    // would have been queued in the engine before the marker, so its copy would come first.
    const marker = `marker-${uid()}`;
    await pub.c.publishAsync("loop/x", marker, { qos: 1 });
    await sub.inbox.waitFor((m) => m.topic === "loop/again" && m.payload === marker, "the marker republished");
    expect(sub.inbox.all.filter((m) => m.payload !== marker)).toHaveLength(2);
  });

  it("fires on client events ($events/client_connected, 3.x client.disconnected)", async () => {
    const tag = uid("ev");
    await createRule({
      rawsql: `SELECT clientid, client_id FROM "$events/client_connected" WHERE clientid = '${tag}'`,
      actions: [{ name: "republish", params: { target_topic: "ev/connected", payload_tmpl: "${client_id}" } }],
    });
    const sub = await connect(node(), 4);
    await sub.c.subscribeAsync("ev/#", { qos: 1 });
    await connect(node(), 4, { clientId: tag });
    const m = await sub.inbox.next();
    expect(m.payload).toBe(tag);
  });
});

describe("web hook", () => {
  let server: Server;
  let port = 0;
  const hits: Hit[] = [];
  const listen = (p: number) =>
    new Promise<void>((resolve) => {
      server = createServer((rq, rs) => {
        let body = "";
        rq.on("data", (d) => {
          body += d;
        });
        rq.on("end", () => {
          hits.push({ method: rq.method ?? "", url: rq.url ?? "", headers: rq.headers, body });
          rs.end("ok");
        });
      });
      server.listen(p, "127.0.0.1", () => {
        port = (server.address() as AddressInfo).port;
        resolve();
      });
    });
  const close = () =>
    new Promise<void>((r) => {
      server.closeAllConnections();
      server.close(() => r());
    });
  beforeAll(() => listen(0));
  afterAll(close);

  it("sends method, path, headers and body templates; down counts failures and alarms; back recovers", async () => {
    const res = await req(node(), "POST", `${v4}/resources`, {
      body: { type: "web_hook", config: { url: `http://127.0.0.1:${port}/hook`, headers: { "x-res": "r1" } } },
    });
    expect(res.status, res.text).toBe(200);
    const rid = res.body.data.id as string;
    expect(rid).toMatch(/^resource:[0-9a-f]{8}$/);
    expect((await req(node(), "GET", `${v4}/resource_status/${rid}`)).body).toEqual({
      code: 0,
      data: { is_alive: true },
    });
    const rule = await createRule({
      rawsql: `SELECT topic, payload.n as n, clientid FROM "wh/#"`,
      actions: [
        {
          name: "data_to_webserver",
          params: {
            $resource: rid,
            method: "PUT",
            path: "/${clientid}",
            headers: { "content-type": "application/json", "x-topic": "${topic}" },
            body: '{"t":"${topic}","n":${n}}',
          },
        },
      ],
    });
    const pub = await connect(node(), 4);
    await pub.c.publishAsync("wh/a", JSON.stringify({ n: 7 }), { qos: 1 });
    await waitUntil(() => hits.length === 1, "web hook request");
    expect(hits[0]).toMatchObject({ method: "PUT", url: `/hook/${pub.id}`, body: '{"t":"wh/a","n":7}' });
    expect(hits[0].headers["x-topic"]).toBe("wh/a");
    expect(hits[0].headers["x-res"]).toBe("r1");

    // deleting a resource an enabled rule uses is refused
    const del = await req(node(), "DELETE", `${v4}/resources/${rid}`);
    expect(del.status).toBe(400);
    expect(del.body.message).toContain("depends on this resource, disable them first");

    await close();
    const failuresBefore = node().broker.metrics.get("actions.failure");
    await pub.c.publishAsync("wh/a", JSON.stringify({ n: 8 }), { qos: 1 });
    const action = () => node().rules.loadedRule(rule.id)?.actions[0].metrics;
    await waitUntil(() => action()?.failed === 1, "action failure");
    expect(node().broker.metrics.get("actions.failure") - failuresBefore).toBe(1);
    await waitUntil(() => node().sys.alarms.isActive(`resource_down:${rid}`), "resource alarm");
    expect((await req(node(), "GET", `${v4}/resource_status/${rid}`)).body.data.is_alive).toBe(false);

    await listen(port);
    expect((await req(node(), "POST", `${v4}/resources/${rid}`)).body).toEqual({ code: 0 });
    await waitUntil(() => !node().sys.alarms.isActive(`resource_down:${rid}`), "alarm cleared");
    await pub.c.publishAsync("wh/a", JSON.stringify({ n: 9 }), { qos: 1 });
    await waitUntil(() => hits.length === 2, "web hook request after recovery");
    expect(hits[1].body).toBe('{"t":"wh/a","n":9}');
    expect(action()).toMatchObject({ success: 2, failed: 1 });

    // after the rule goes, the resource can go
    expect((await req(node(), "DELETE", `${v4}/rules/${rule.id}`)).body).toEqual({ code: 0 });
    expect((await req(node(), "DELETE", `${v4}/resources/${rid}`)).body).toEqual({ code: 0 });
    expect((await req(node(), "GET", `${v4}/resources/${rid}`)).status).toBe(404);
  });
});

describe("rule test and API", () => {
  it("POST /rules?test=true evaluates against a simulated event", async () => {
    const t = (body: unknown) => req(node(), "POST", `${v4}/rules?test=true`, { body });
    const ok = await t({ rawsql: `SELECT payload.a as a FROM "t/#"`, ctx: { topic: "t/1", payload: '{"a":1}' } });
    expect(ok.body).toEqual({ code: 0, data: { a: 1 } });
    const miss = await t({ rawsql: `SELECT * FROM "x/#"`, ctx: { topic: "t/1" } });
    expect(miss.status).toBe(200);
    expect(miss.body).toEqual({ code: 404, message: "SQL Not Match" });
    const badSql = await t({ rawsql: "SELECT FROM", ctx: {} });
    expect(badSql.body.code).toBe(400);
    expect(badSql.body.message).toMatch(/^Bad Arguments/);
  });

  it("first body variant, errors, actions, resource types, events", async () => {
    const r = await createRule({
      name: "inspect_connected",
      for: "client.connected",
      rawsql: `SELECT * FROM "client.connected"`,
      actions: [{ name: "inspect", params: {} }],
      description: "d",
    });
    expect(r.id).toMatch(/^inspect_connected:\d+$/);
    expect(r).toMatchObject({ name: "inspect_connected", for: "client.connected", description: "d", enabled: true });
    expect(r.actions[0]).toMatchObject({ name: "inspect", params: {} });
    const list = (await req(node(), "GET", `${v4}/rules`)).body.data;
    expect(list.map((x: { id: string }) => x.id)).toContain(r.id);

    const e1 = await req(node(), "POST", `${v4}/rules`, { body: { rawsql: "SELECT x FRM t", actions: [] } });
    expect(e1.status).toBe(400);
    const e2 = await req(node(), "POST", `${v4}/rules`, {
      body: { rawsql: `SELECT * FROM "t"`, actions: [{ name: "nope", params: {} }] },
    });
    expect(e2.status).toBe(400);
    const e3 = await req(node(), "POST", `${v4}/rules`, {
      body: { rawsql: `SELECT * FROM "t"`, actions: [{ name: "republish", params: { target_topic: "a/#" } }] },
    });
    expect(e3.status).toBe(400);
    expect((await req(node(), "GET", `${v4}/rules/rule:nothere`)).status).toBe(404);
    expect(
      (await req(node(), "POST", `${v4}/rules`, { body: { id: r.id, rawsql: `SELECT * FROM "t"` } })).body.message,
    ).toBe("Already Exists");

    const acts = (await req(node(), "GET", `${v4}/actions?for=client.connected`)).body.data;
    const names = acts.map((a: { name: string }) => a.name);
    expect(names).toEqual(expect.arrayContaining(["inspect", "do_nothing", "republish", "web_hook:event_action"]));
    expect(names).not.toContain("web_hook:publish_action");
    const all = (await req(node(), "GET", `${v4}/actions`)).body.data;
    for (const a of all)
      expect(Object.keys(a).sort()).toEqual([
        "app",
        "category",
        "description",
        "for",
        "name",
        "params",
        "title",
        "types",
      ]);
    const rp = (await req(node(), "GET", `${v4}/actions/republish`)).body.data;
    expect(rp.params.target_topic).toMatchObject({ type: "string", required: true, format: "topic" });
    expect((await req(node(), "GET", `${v4}/actions/nope`)).status).toBe(404);

    const types = (await req(node(), "GET", `${v4}/resource_types`)).body.data;
    expect(types.map((x: { name: string }) => x.name)).toContain("web_hook");
    const wh = (await req(node(), "GET", `${v4}/resource_types/web_hook`)).body.data;
    expect(Object.keys(wh.params)).toEqual(expect.arrayContaining(["url", "headers", "method", "pool_size"]));
    const whActs = (await req(node(), "GET", `${v4}/resource_types/web_hook/actions`)).body.data;
    expect(whActs.map((a: { name: string }) => a.name).sort()).toEqual([
      "data_to_webserver",
      "web_hook:event_action",
      "web_hook:publish_action",
    ]);
    expect((await req(node(), "GET", `${v4}/resource_types/nope`)).status).toBe(404);
    expect((await req(node(), "POST", `${v4}/resources`, { body: { type: "web_hook", config: {} } })).status).toBe(400);
    const first = await req(node(), "POST", `/api/v3/resources`, {
      body: { name: "h1", type: "web_hook", config: { url: "http://127.0.0.1:1/x" }, description: "x" },
    });
    expect(first.body.data).toMatchObject({ id: "web_hook:h1", name: "h1", type: "web_hook", description: "x" });
    expect(typeof first.body.data.attrs).toBe("string");
    const ofType = (await req(node(), "GET", `${v4}/resource_types/web_hook/resources`)).body.data;
    expect(ofType.map((x: { id: string }) => x.id)).toContain("web_hook:h1");
    const dry = await req(node(), "POST", `${v4}/resources?test=true`, {
      body: { type: "web_hook", config: { url: "http://127.0.0.1:1/x" } },
    });
    expect(dry.status).toBe(400);

    const events = (await req(node(), "GET", `${v4}/rule_events`)).body.data;
    expect(events.map((e: { event: string }) => e.event)).toContain("$events/client_connected");
    expect(Object.keys(events[0]).sort()).toEqual([
      "columns",
      "description",
      "event",
      "sql_example",
      "test_columns",
      "title",
    ]);

    // stored in the cluster store
    const stored = await node().store.range("");
    expect(stored.entries.some((e) => e.key.endsWith(`/rules/${r.id}`))).toBe(true);
    expect(stored.entries.some((e) => e.key.endsWith("/resources/web_hook:h1"))).toBe(true);
  });
});
