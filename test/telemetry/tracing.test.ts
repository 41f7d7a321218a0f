// Tracing end to end on one node, with the SDK's in-memory exporter wired through startNode's
// test-only `tracing.spanProcessors`: an MQTT 5.0 publish carrying `traceparent` makes one trace
// (publish -> deliver, parented to the publisher's span), the subscriber receives the deliver
// span's traceparent, at most `telemetry.max_deliver_spans` deliver spans per message, CONNECT
// and API requests make spans, and log lines inside a span carry its ids. Also the Prometheus
// exposition at /metrics: it parses and matches /api/v4/metrics and /api/v4/stats.

import { readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { createLogger } from "../../src/telemetry/logger.ts";
import { logFields, tracingLoaded } from "../../src/telemetry/tracing.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";
import { parsePrometheus } from "./prom-parse.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 5000): Promise<void> =>
  waitUntil(pred, what, ms);

describe("tracing on", () => {
  const exporter = new InMemorySpanExporter();
  let node: TestNode;
  const clients: MqttClient[] = [];
  const api = (path: string) => `http://127.0.0.1:${node.managementPort("http")}${path}`;
  const auth = { authorization: `Basic ${Buffer.from("admin:public").toString("base64")}` };

  const connect = async (clientId: string, v: 4 | 5 = 5): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(node.url, { clientId, protocolVersion: v, reconnectPeriod: 0 });
    clients.push(c);
    return c;
  };
  /** Pushes the user properties of every message `c` receives into `into` (and returns it). */
  const userProps = (c: MqttClient, into: Record<string, unknown>[] = []): Record<string, unknown>[] => {
    c.on("message", (_t, _p, packet) =>
      into.push((packet.properties?.userProperties ?? {}) as Record<string, unknown>),
    );
    return into;
  };
  const spans = (): ReadableSpan[] => exporter.getFinishedSpans();
  const named = (prefix: string): ReadableSpan[] => spans().filter((s) => s.name.startsWith(prefix));

  beforeAll(async () => {
    node = await startTestNode({
      set: { "telemetry.tracing": "on", "telemetry.max_deliver_spans": "2" },
      tracing: { spanProcessors: [new SimpleSpanProcessor(exporter)] },
    });
  });
  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync().catch(() => {})));
    await node?.close();
  });
  beforeEach(() => exporter.reset());

  it("loads the API and sets the broker's tracing port", () => {
    expect(tracingLoaded()).toBe(true);
    expect(node.broker.tracing).not.toBeNull();
  });

  it("a 5.0 publish with traceparent: one trace, publish -> deliver, and the subscriber gets the deliver span's traceparent", async () => {
    const sub = await connect("tr-sub");
    await sub.subscribeAsync("tr/#", { qos: 1 });
    const got = userProps(sub);
    const pub = await connect("tr-pub");
    await pub.publishAsync("tr/1", "hello", {
      qos: 1,
      properties: { userProperties: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "vendor=x", app: "y" } },
    });
    await until(() => got.length === 1, "delivery");
    await until(() => named("deliver").length === 1, "deliver span");

    const publish = named("publish tr/1");
    expect(publish).toHaveLength(1);
    const p = publish[0];
    expect(p.spanContext().traceId).toBe(TRACE);
    expect(p.parentSpanContext?.spanId).toBe(PARENT);
    expect(p.attributes["messaging.system"]).toBe("mqtt");
    expect(p.attributes["messaging.destination.name"]).toBe("tr/1");
    expect(p.attributes["messaging.client.id"]).toBe("tr-pub");
    expect(p.attributes["messaging.mqtt.qos"]).toBe(1);
    expect(p.attributes["svc.deliveries"]).toBe(1);

    const d = named("deliver tr/1")[0];
    expect(d.spanContext().traceId).toBe(TRACE);
    expect(d.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
    expect(d.attributes["messaging.consumer.id"]).toBe("tr-sub");

    // Every span of the message is in the one trace.
    for (const s of [...named("publish tr/"), ...named("deliver tr/")]) expect(s.spanContext().traceId).toBe(TRACE);

    // The subscriber's PUBACK: an ack span under the deliver span.
    await until(() => named("ack tr/1").length === 1, "ack span");
    const a = named("ack tr/1")[0];
    expect(a.spanContext().traceId).toBe(TRACE);
    expect(a.parentSpanContext?.spanId).toBe(d.spanContext().spanId);
    expect(a.attributes["mqtt.ack.packet"]).toBe("PUBACK");
    expect(a.attributes["messaging.consumer.id"]).toBe("tr-sub");
    expect(a.attributes["messaging.operation.type"]).toBe("settle");

    const up = got[0];
    expect(up.traceparent).toBe(`00-${TRACE}-${d.spanContext().spanId}-01`);
    expect(up.tracestate).toBe("vendor=x");
    expect(up.app).toBe("y");
  });

  it("a publish without traceparent starts a trace; a 3.1.1 subscriber gets no user properties", async () => {
    const sub5 = await connect("tr-sub5");
    const sub4 = await connect("tr-sub4", 4);
    await sub5.subscribeAsync("tr2/x");
    await sub4.subscribeAsync("tr2/x");
    const got5 = userProps(sub5);
    let got4 = 0;
    sub4.on("message", () => got4++);
    const pub = await connect("tr-pub2");
    await pub.publishAsync("tr2/x", "a");
    await until(() => got5.length === 1 && got4 === 1, "deliveries");
    const p = named("publish tr2/x")[0];
    expect(p.parentSpanContext).toBeUndefined();
    expect(got5[0].traceparent).toMatch(new RegExp(`^00-${p.spanContext().traceId}-[0-9a-f]{16}-01$`));
    await until(() => named("deliver tr2/x").length === 2, "deliver spans");
    // QoS 0 deliveries are not acknowledged: no ack span.
    expect(named("ack tr2/x")).toHaveLength(0);
  });

  it("a traced large payload arrives intact: whole bytes with the traceparent (5.0), the shared bytes and payload (3.1.1)", async () => {
    // 5.0 (a trace state: serialized per delivery): whole bytes with the traceparent; 3.1.1: the
    // shared bytes that end before the payload, then the payload.
    const sub5 = await connect("tr-big5");
    const sub4 = await connect("tr-big4", 4);
    await sub5.subscribeAsync("tr-big/x", { qos: 1 });
    await sub4.subscribeAsync("tr-big/x", { qos: 1 });
    const payload = Buffer.alloc(20_000);
    for (let i = 0; i < payload.length; i++) payload[i] = (i * 31) & 0xff;
    const got: { id: string; payload: Buffer; up: Record<string, unknown> }[] = [];
    for (const [id, c] of [
      ["5", sub5],
      ["4", sub4],
    ] as const)
      c.on("message", (_t, p, packet) =>
        got.push({
          id,
          payload: Buffer.from(p),
          up: (packet.properties?.userProperties ?? {}) as Record<string, unknown>,
        }),
      );
    // Every byte the 5.0 subscriber receives is part of a packet it parsed (no stray payload copy).
    const stream = (sub5 as unknown as { stream: NodeJS.ReadableStream }).stream;
    let received = 0;
    stream.on("data", (chunk: Buffer) => {
      received += chunk.length;
    });
    let parsed = 0;
    sub5.on("packetreceive", (packet) => {
      const n = (packet as { length: number }).length;
      parsed += 1 + (n < 128 ? 1 : n < 16_384 ? 2 : n < 2_097_152 ? 3 : 4) + n;
    });
    const pub = await connect("tr-big-pub");
    const properties = { userProperties: { traceparent: `00-${TRACE}-${PARENT}-01`, tracestate: "vendor=big" } };
    await pub.publishAsync("tr-big/x", payload, { qos: 1, properties });
    await pub.publishAsync("tr-big/x", "after", { qos: 1 });
    await until(() => got.length === 4, "deliveries");
    expect(received).toBe(parsed);
    for (const id of ["5", "4"]) {
      const mine = got.filter((g) => g.id === id);
      expect(mine.map((g) => g.payload.length)).toEqual([payload.length, 5]);
      expect(mine[0].payload.equals(payload)).toBe(true);
      expect(mine[1].payload.toString()).toBe("after");
    }
    const up5 = got.find((g) => g.id === "5")?.up;
    expect(up5?.traceparent).toMatch(new RegExp(`^00-${TRACE}-[0-9a-f]{16}-01$`));
    expect(up5?.tracestate).toBe("vendor=big");
    expect(got.find((g) => g.id === "4")?.up.traceparent).toBeUndefined();
  });

  it("a publish the sampler drops (traceparent flagged 00) is delivered untraced: no span, the publisher's traceparent as sent", async () => {
    const sub = await connect("tr-sub-drop");
    await sub.subscribeAsync("tr-drop/x", { qos: 1 });
    const got = userProps(sub);
    const pub = await connect("tr-pub-drop");
    const unsampled = `00-${TRACE}-${PARENT}-00`;
    await pub.publishAsync("tr-drop/x", "a", { qos: 1, properties: { userProperties: { traceparent: unsampled } } });
    // A sampled publish after it: its spans mark the point by which the dropped one's would be.
    await pub.publishAsync("tr-drop/x", "b", { qos: 1 });
    await until(() => got.length === 2, "both deliveries");
    await until(() => named("deliver tr-drop/x").length === 1, "the sampled message's deliver span");
    expect(got[0].traceparent).toBe(unsampled);
    expect(named("publish tr-drop/x")).toHaveLength(1);
    expect(named("publish tr-drop/x")[0].spanContext().traceId).not.toBe(TRACE);
  });

  it("a QoS 2 delivery's PUBCOMP makes an ack span under its deliver span", async () => {
    const sub = await connect("tr-sub-q2");
    await sub.subscribeAsync("tr3/x", { qos: 2 });
    const got: { up: Record<string, unknown>; payload: string }[] = [];
    sub.on("message", (_t, payload, packet) =>
      got.push({ up: (packet.properties?.userProperties ?? {}) as Record<string, unknown>, payload: String(payload) }),
    );
    const pub = await connect("tr-pub-q2");
    // Two messages: each delivery's bytes come from one template per message with its own
    // traceparent and packet id written in.
    await pub.publishAsync("tr3/x", "a", { qos: 2, properties: { userProperties: { app: "z" } } });
    await pub.publishAsync("tr3/x", "b", { qos: 2 });
    await until(() => got.length === 2, "deliveries");
    await until(() => named("ack tr3/x").length === 2, "ack spans");
    const ds = named("deliver tr3/x");
    const acks = named("ack tr3/x");
    for (const a of acks) {
      expect(ds.map((d) => d.spanContext().spanId)).toContain(a.parentSpanContext?.spanId);
      expect(a.attributes["mqtt.ack.packet"]).toBe("PUBCOMP");
    }
    expect(got.map((g) => g.payload)).toEqual(["a", "b"]);
    expect(got[0].up.app).toBe("z");
    const sent = new Set(got.map((g) => String(g.up.traceparent).split("-")[2]));
    expect(sent).toEqual(new Set(ds.map((d) => d.spanContext().spanId)));
  });

  it("records at most telemetry.max_deliver_spans deliver spans per message; the rest continue the publish span", async () => {
    const subs = await Promise.all([1, 2, 3, 4].map((i) => connect(`fan-${i}`)));
    const got: Record<string, unknown>[] = [];
    for (const s of subs) {
      await s.subscribeAsync("fan/out");
      userProps(s, got);
    }
    const pub = await connect("fan-pub");
    await pub.publishAsync("fan/out", "x");
    await until(() => got.length === 4, "fan-out");
    await until(() => named("publish fan/out").length === 1, "publish span");
    expect(named("deliver fan/out")).toHaveLength(2);
    const p = named("publish fan/out")[0];
    const traces = new Set(got.map((u) => String(u.traceparent).split("-")[1]));
    expect(traces).toEqual(new Set([p.spanContext().traceId]));
    expect(got.filter((u) => String(u.traceparent).split("-")[2] === p.spanContext().spanId)).toHaveLength(2);
  });

  it("traced QoS 1 messages to three subscribers: each delivery its own traceparent and packet id, bytes intact", async () => {
    const subs = await Promise.all([1, 2, 3].map((i) => connect(`q1fan-${i}`)));
    const got: { sub: number; payload: string; tp: string }[] = [];
    for (const [i, s] of subs.entries()) {
      await s.subscribeAsync("q1fan/x", { qos: 1 });
      s.on("message", (_t, payload, packet) =>
        got.push({ sub: i, payload: String(payload), tp: String(packet.properties?.userProperties?.traceparent) }),
      );
    }
    const pub = await connect("q1fan-pub");
    // The first delivery's bytes are the template the later ones copy: they must reach their
    // subscriber as they were built, with the others' span ids and packet ids written elsewhere.
    await pub.publishAsync("q1fan/x", "one", { qos: 1 });
    await pub.publishAsync("q1fan/x", "two", { qos: 1 });
    await until(() => got.length === 6, "deliveries");
    await until(() => named("publish q1fan/x").length === 2, "publish spans");
    for (const i of [0, 1, 2]) expect(got.filter((g) => g.sub === i).map((g) => g.payload)).toEqual(["one", "two"]);
    for (const [n, payload] of ["one", "two"].entries()) {
      const p = named("publish q1fan/x")[n];
      const trace = p.spanContext().traceId;
      const ds = named("deliver q1fan/x").filter((d) => d.spanContext().traceId === trace);
      expect(ds).toHaveLength(2);
      // Two deliver spans' ids and, beyond the cap of 2, the publish span's.
      const tps = got.filter((g) => g.payload === payload).map((g) => g.tp);
      expect(new Set(tps)).toEqual(
        new Set([...ds.map((d) => d.spanContext().spanId), p.spanContext().spanId].map((id) => `00-${trace}-${id}-01`)),
      );
    }
  });

  it("a traced retained message: later subscribers get deliver spans under its publish span, within the cap", async () => {
    const pub = await connect("ret-pub");
    await pub.publishAsync("tr-ret/x", "kept", { qos: 1, retain: true });
    await until(() => named("publish tr-ret/x").length === 1, "publish span");
    const p = named("publish tr-ret/x")[0];
    expect(p.attributes["svc.deliveries"]).toBe(0);
    const got: Record<string, unknown>[] = [];
    for (const i of [1, 2, 3]) {
      const s = await connect(`ret-sub-${i}`);
      userProps(s, got);
      await s.subscribeAsync("tr-ret/x", { qos: 1 });
      await until(() => got.length === i, `retained delivery ${i}`);
    }
    await until(() => named("deliver tr-ret/x").length === 2, "deliver spans");
    const deliver = named("deliver tr-ret/x");
    for (const d of deliver) {
      expect(d.spanContext().traceId).toBe(p.spanContext().traceId);
      expect(d.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
    }
    expect(deliver.map((d) => d.attributes["messaging.consumer.id"])).toEqual(["ret-sub-1", "ret-sub-2"]);
    // The first two carry their deliver span's traceparent, the third the publish span's.
    const ids = got.map((u) => String(u.traceparent).split("-")[2]);
    expect(ids).toEqual([...deliver.map((d) => d.spanContext().spanId), p.spanContext().spanId]);
    await pub.publishAsync("tr-ret/x", "", { qos: 1, retain: true });
  });

  it("CONNECT makes a connect span with an authenticate child", async () => {
    await connect("conn-span");
    await until(() => named("connect").some((s) => s.attributes["messaging.client.id"] === "conn-span"), "connect");
    const c = named("connect").find((s) => s.attributes["messaging.client.id"] === "conn-span") as ReadableSpan;
    expect(c.attributes["mqtt.connack.reason_code"]).toBe(0);
    const a = named("authenticate").find((s) => s.parentSpanContext?.spanId === c.spanContext().spanId);
    expect(a).toBeDefined();
  });

  it("an API request is a span named after its route, continuing the caller's traceparent", async () => {
    const r = await fetch(api("/api/v4/nodes"), { headers: { ...auth, traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(r.status).toBe(200);
    await until(() => named("GET").length > 0, "API span");
    const s = named("GET")[0];
    expect(s.name).toBe("GET /api/v4/nodes");
    expect(s.spanContext().traceId).toBe(TRACE);
    expect(s.parentSpanContext?.spanId).toBe(PARENT);
    expect(s.attributes["http.response.status_code"]).toBe(200);
  });

  it("an API publish continues the API request's trace", async () => {
    const sub = await connect("api-sub");
    await sub.subscribeAsync("api/t");
    let n = 0;
    sub.on("message", () => n++);
    const r = await fetch(api("/api/v4/mqtt/publish"), {
      method: "POST",
      headers: { ...auth, "content-type": "application/json" },
      body: JSON.stringify({ topic: "api/t", payload: "x", clientid: "api" }),
    });
    expect(r.status).toBe(200);
    await until(() => n === 1, "API publish delivered");
    await until(() => named("POST").length > 0, "API span");
    const http = named("POST")[0];
    const p = named("publish api/t")[0];
    expect(p.spanContext().traceId).toBe(http.spanContext().traceId);
  });

  it("log lines inside a span carry trace_id and span_id", async () => {
    const file = join(tmpdir(), `svc-trace-log-${process.pid}.log`);
    const log = createLogger({ level: "info", node: "t", destination: file });
    const t = node.broker.tracing as unknown as { t: import("../../src/telemetry/tracing.ts").Tracing };
    const span = t.t.start("test span", { parent: null });
    t.t.with(span, () => log.info({ a: 1 }, "inside"));
    span.end();
    log.info({}, "outside");
    expect(logFields()).toEqual({});
    const lines = readFileSync(file, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    rmSync(file, { force: true });
    expect(lines[0].trace_id).toBe(span.spanContext().traceId);
    expect(lines[0].span_id).toBe(span.spanContext().spanId);
    expect(lines[1].trace_id).toBeUndefined();
  });

  it("GET /metrics: Prometheus text that parses and matches /api/v4 metrics and stats, no auth", async () => {
    const r = await fetch(api("/metrics"));
    expect(r.status).toBe(200);
    expect(r.headers.get("content-type")).toContain("text/plain; version=0.0.4");
    const text = await r.text();
    // Nothing moves between the reads: no client traffic now (the node's own $SYS may publish, so
    // the comparison reads the API right after and allows only those counters to move).
    const view = async (v: string) =>
      (
        (await (await fetch(api(`/api/v4/nodes/${node.broker.nodeName}/${v}`), { headers: auth })).json()) as {
          data: Record<string, number>;
        }
      ).data;
    const metrics = await view("metrics");
    const stats = await view("stats");
    expect(Object.keys(metrics).length).toBeGreaterThan(50);
    expect(Object.keys(stats).length).toBeGreaterThan(5);
    const ex = parsePrometheus(text);
    const byName = new Map<string, number>();
    for (const s of ex.samples) {
      if (s.labels.listener !== undefined) continue;
      expect(s.labels.node).toBe(node.broker.nodeName);
      expect(byName.has(s.name), s.name).toBe(false);
      byName.set(s.name, s.value);
    }
    const prom = (k: string) => `svc_${k.replace(/\./g, "_")}`;
    const moving = /^(bytes|packets|messages)\./;
    for (const [k, v] of Object.entries(metrics)) {
      expect(ex.types.get(prom(k)), k).toBe("counter");
      if (!moving.test(k)) expect(byName.get(prom(k)), k).toBe(v);
      else expect(byName.get(prom(k)), k).toBeLessThanOrEqual(v);
    }
    for (const [k, v] of Object.entries(stats)) {
      expect(ex.types.get(prom(k)), k).toBe("gauge");
      expect(byName.get(prom(k)), k).toBe(v);
    }
    const conns = ex.samples.filter((s) => s.name === "svc_listener_current_conns");
    const tcp = conns.find((s) => s.labels.listener === "mqtt:tcp");
    expect(tcp?.labels.node).toBe(node.broker.nodeName);
    expect(tcp?.value).toBe(node.listenerInfo().find((l) => l.protocol === "mqtt:tcp")?.current_conns);
    expect(conns.some((s) => s.labels.listener === "http:management")).toBe(true);
  });
});
