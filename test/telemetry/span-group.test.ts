// Deliver spans kept as a group while a traced message is routed (src/telemetry/span-group.ts):
// written straight from its arrays, a group (or a part of one) is the request the whole-batch encoder
// writes for its spans one by one; a processor that takes spans one by one gets the group's spans;
// and through startTracingSdk and a broker, a traced message's deliveries reach an HTTP receiver
// as children of its publish span. (The http/protobuf processor's handling of groups, split at its
// batch size and cut at its queue: otlp-batch-processor.test.ts.)

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import * as api from "@opentelemetry/api";
import mqtt from "mqtt";
import { afterEach, describe, expect, it, vi } from "vitest";
import { SpanBatch } from "../../src/telemetry/otlp-batch.ts";
import { encodeTraceExportRequest, type OtlpSpan } from "../../src/telemetry/otlp-proto.ts";
import { SpanGroup } from "../../src/telemetry/span-group.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Decoded, decodeTraceRequest } from "./otlp-decode.ts";

const RESOURCE = { attributes: { "service.name": "svc" } };
const SCOPE = { name: "svc", version: "0.1.0" };
const PARENT: api.SpanContext = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: 1,
  isRemote: false,
};
const SHARED = [Object.freeze({ "messaging.system": "mqtt" }), { "messaging.destination.name": "a/b" }];

function group(n: number, parent = PARENT, own = (i: number): api.Attributes => Object.freeze({ sub: `c${i}` })) {
  const g = new SpanGroup("deliver a/b", api.SpanKind.PRODUCER, parent, SHARED, RESOURCE, SCOPE);
  for (let i = 0; i < n; i++) g.add(own(i));
  return g;
}

const spansOf = (g: SpanGroup, from = 0, to = g.length): OtlpSpan[] =>
  Array.from({ length: to - from }, (_, i) => g.span(from + i) as unknown as OtlpSpan);

const bytesOf = (b: SpanBatch): Buffer => Buffer.from(b.take().bytes);

describe("a span group encoded", () => {
  it("is the request of its spans encoded one by one, whole or in parts", () => {
    for (const n of [1, 2, 3, 10]) {
      const g = group(n);
      const b = new SpanBatch();
      b.addGroup(g, 0, n);
      expect(bytesOf(b).equals(encodeTraceExportRequest(spansOf(g)))).toBe(true);
    }
    const g = group(10);
    const b = new SpanBatch();
    b.addGroup(g, 2, 7);
    expect(bytesOf(b).equals(encodeTraceExportRequest(spansOf(g, 2, 7)))).toBe(true);
  });

  it("between other spans, with own attributes not frozen, and under a parent with a trace state", () => {
    const loose = group(4, PARENT, (i) => ({ sub: `c${i}`, n: i, ok: i % 2 === 0 }));
    const stated = group(3, { ...PARENT, traceState: api.createTraceState("k=v") });
    const other = group(2);
    const b = new SpanBatch();
    b.add(spansOf(other)[0]);
    b.addGroup(loose, 0, 4);
    b.addGroup(stated, 0, 3);
    b.add(spansOf(other)[1]);
    const expected = [spansOf(other)[0], ...spansOf(loose), ...spansOf(stated), spansOf(other)[1]];
    expect(bytesOf(b).equals(encodeTraceExportRequest(expected))).toBe(true);
  });

  it("gives each span its own id, the parent's trace, and the time it was added", () => {
    const g = group(3);
    const ids = new Set(g.ids);
    expect(ids.size).toBe(3);
    for (let i = 0; i < 3; i++) {
      const s = g.span(i);
      expect(s.spanContext()).toEqual({ traceId: PARENT.traceId, spanId: g.ids[i], traceFlags: 1, isRemote: false });
      expect(s.parentSpanContext).toBe(PARENT);
      expect(s.startTime).toBe(g.times[i]);
      expect(s.attributes).toEqual({ ...SHARED[0], ...SHARED[1], sub: `c${i}` });
    }
  });
});

describe("a traced message's deliveries through the SDK", () => {
  let node: TestNode | undefined;
  let server: Server | undefined;
  afterEach(async () => {
    vi.unstubAllEnvs();
    await node?.close();
    node = undefined;
    await new Promise((r) => (server ? server.close(r) : r(undefined)));
    server = undefined;
  });

  it("reach an OTLP/HTTP receiver as children of the publish span, one per subscriber", async () => {
    const bodies: Buffer[] = [];
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        bodies.push(Buffer.concat(chunks));
        res.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    await new Promise<void>((r) => server?.listen(0, "127.0.0.1", r));
    const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1/traces`;
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint);
    vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
    vi.stubEnv("OTEL_TRACES_SAMPLER", "parentbased_always_on");
    node = await startTestNode({ set: { "telemetry.tracing": "on" } });
    const subs = await Promise.all(
      [0, 1, 2].map((i) => mqtt.connectAsync(node?.url as string, { clientId: `s${i}`, reconnectPeriod: 0 })),
    );
    const got = subs.map((s) => new Promise((r) => s.once("message", r)));
    await Promise.all(subs.map((s) => s.subscribeAsync("g/t", { qos: 0 })));
    const pub = await mqtt.connectAsync(node.url, { clientId: "p", reconnectPeriod: 0 });
    await pub.publishAsync("g/t", "x", { qos: 0 });
    await Promise.all(got);
    await Promise.all([pub, ...subs].map((c) => c.endAsync()));
    await node.close(); // flushes the spans
    node = undefined;
    const spans = bodies.flatMap((b) =>
      decodeTraceRequest(b).resourceSpans.flatMap((r: Decoded) => r.scopeSpans.flatMap((s: Decoded) => s.spans)),
    );
    const publish = spans.filter((s: Decoded) => s.name === "publish g/t");
    expect(publish).toHaveLength(1);
    const deliver = spans.filter((s: Decoded) => s.name === "deliver g/t");
    expect(deliver).toHaveLength(3);
    for (const d of deliver) {
      expect(d.parentSpanId).toEqual(publish[0].spanId);
      expect(d.traceId).toEqual(publish[0].traceId);
    }
    const consumers = deliver.map(
      (d: Decoded) => d.attributes.find((kv: Decoded) => kv.key === "messaging.consumer.id")?.value.stringValue,
    );
    expect(consumers.sort()).toEqual(["s0", "s1", "s2"]);
    expect(new Set(deliver.map((d: Decoded) => d.spanId)).size).toBe(3);
  });
});
