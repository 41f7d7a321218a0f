// Rule-engine spans with tracing on (SDK in-memory exporter): a traced 5.0 publish that a rule
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
// matches yields `rule <id>` under the publish span and `action <name>` under the rule span; the
// web hook request the action makes (to an HTTP server in the test) carries the action span's
// traceparent; a republished message continues the same trace; an untraced message makes no rule
// span; a failing web hook marks its action span as an error.

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { req } from "../api/helpers.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const TRACE = "5bf92f3577b34da6a3ce929d0e0e4737";
const PARENT = "10f067aa0ba902b8";
const v4 = "/api/v4";

describe("rule and action spans", () => {
  const exporter = new InMemorySpanExporter();
  let node: TestNode;
  let server: Server;
  let status = 200;
  const hits: IncomingMessage["headers"][] = [];
  const clients: MqttClient[] = [];
  const named = (prefix: string): ReadableSpan[] =>
    exporter.getFinishedSpans().filter((s) => s.name.startsWith(prefix));

  const createRule = async (body: unknown): Promise<string> => {
    const r = await req(node, "POST", `${v4}/rules`, { body });
    expect(r.status, r.text).toBe(200);
    return r.body.data.id as string;
  };
  const publisher = async (): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(node.url, { clientId: "rt-pub", protocolVersion: 5, reconnectPeriod: 0 });
    clients.push(c);
    return c;
  };
  const traced = { userProperties: { traceparent: `00-${TRACE}-${PARENT}-01` } };

  beforeAll(async () => {
    server = createServer((rq, rs) => {
      rq.resume();
      rq.on("end", () => {
        hits.push(rq.headers);
        rs.statusCode = status;
        rs.end();
      });
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
    node = await startTestNode({
      set: { "telemetry.tracing": "on" },
      tracing: { spanProcessors: [new SimpleSpanProcessor(exporter)] },
    });
    const res = await req(node, "POST", `${v4}/resources`, {
      body: { type: "web_hook", config: { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook` } },
    });
    expect(res.status, res.text).toBe(200);
    const rid = res.body.data.id as string;
    await createRule({
      rawsql: `SELECT payload, topic FROM "rt/hook/#"`,
      actions: [{ name: "data_to_webserver", params: { $resource: rid } }],
    });
    await createRule({
      rawsql: `SELECT payload FROM "rt/rp/#"`,
      actions: [{ name: "republish", params: { target_topic: "rt/out", payload_tmpl: "${payload}" } }],
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync().catch(() => {})));
    await node?.close();
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });
  beforeEach(() => {
    exporter.reset();
    hits.length = 0;
    status = 200;
  });

  it("publish -> rule -> action, and the web hook request carries the action span's traceparent", async () => {
    const pub = await publisher();
    await pub.publishAsync("rt/hook/1", "x", { qos: 1, properties: traced });
    await waitUntil(() => hits.length === 1, "web hook request");
    await waitUntil(() => named("action ").length === 1, "action span");
    const [publish] = named("publish rt/hook/1");
    const [rule] = named("rule rule:");
    const [action] = named("action data_to_webserver");
    expect(publish.spanContext().traceId).toBe(TRACE);
    expect(rule.spanContext().traceId).toBe(TRACE);
    expect(rule.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(rule.attributes["svc.rule.outcome"]).toBe("passed");
    expect(rule.attributes["svc.rule.rows"]).toBe(1);
    expect(action.parentSpanContext?.spanId).toBe(rule.spanContext().spanId);
    expect(action.status.code).not.toBe(2);
    expect(hits[0].traceparent).toBe(`00-${TRACE}-${action.spanContext().spanId}-01`);
  });

  it("a republished message continues the trace under the action span", async () => {
    const pub = await publisher();
    await pub.publishAsync("rt/rp/1", "y", { qos: 1, properties: traced });
    await waitUntil(() => named("publish rt/out").length === 1, "republish span");
    const [action] = named("action republish");
    const [out] = named("publish rt/out");
    expect(out.spanContext().traceId).toBe(TRACE);
    expect(out.parentSpanContext?.spanId).toBe(action.spanContext().spanId);
  });

  it("an untraced message makes no rule span and no traceparent header", async () => {
    const pub = await publisher();
    // A sampled-out parent: parent-based sampling drops the whole trace.
    await pub.publishAsync("rt/hook/2", "z", {
      qos: 1,
      properties: { userProperties: { traceparent: `00-${TRACE}-${PARENT}-00` } },
    });
    await waitUntil(() => hits.length === 1, "web hook request");
    expect(named("rule ")).toHaveLength(0);
    expect(hits[0].traceparent).toBeUndefined();
  });

  it("a failing web hook ends its action span with an error status", async () => {
    status = 500;
    const pub = await publisher();
    await pub.publishAsync("rt/hook/3", "w", { qos: 1, properties: traced });
    await waitUntil(() => named("action ").length === 1, "action span");
    const [action] = named("action data_to_webserver");
    expect(action.status.code).toBe(2); // SpanStatusCode.ERROR
  });
});
