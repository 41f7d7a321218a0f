// Our OTLP ExportTraceServiceRequest encoder (src/telemetry/otlp-proto.ts) against the SDK's
// ProtobufTraceSerializer: the same bytes, byte for byte, for random batches of real SDK spans
// (two resources, several scopes, every attribute value type, events, links, trace state, status,
// dropped counts) and for hand-made spans in the ReadableSpan shape (bytes and kvlist values,
// extreme times and integers, long strings); equal scopes from distinct objects share one
// ScopeSpans (the SDK's transformer rule). Then the exporter end to end: an HTTP server on
// loopback receives what it posts, configured by the OTEL_EXPORTER_OTLP_* variables (directly,
// with gzip, and through startTracingSdk).

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";
import * as api from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  type ReadableSpan,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { RecordedSpan } from "../../src/telemetry/facade-span.ts";
import { SpanBatch } from "../../src/telemetry/otlp-batch.ts";
import { OtlpProtoTraceExporter } from "../../src/telemetry/otlp-exporter.ts";
import { encodeTraceExportRequest, type OtlpSpan } from "../../src/telemetry/otlp-proto.ts";
import { startTracingSdk } from "../../src/tracing-sdk.ts";
import { mulberry32 } from "../helpers/prng.ts";
import { type Decoded, decodeTraceRequest } from "./otlp-decode.ts";

const sdkBytes = (spans: readonly object[]): Buffer =>
  Buffer.from(ProtobufTraceSerializer.serializeRequest(spans as ReadableSpan[]) ?? new Uint8Array(0));
const ourBytes = (spans: readonly object[]): Buffer =>
  Buffer.from(encodeTraceExportRequest(spans as unknown as OtlpSpan[]));

const NAMES = ["publish", "deliver", "connect", "", "pübliš ñame", "配信 topic", "emoji 🚀 span", "x".repeat(200)];
const STRINGS = ["", "a", "sensor/temp/1", "ünïcödé", "日本語", "🙂", "long ".repeat(40), "\u0000nul"];
const NUMBERS = [0, 1, -1, 127, 128, 300, -300, 2 ** 31, 2 ** 32 + 5, -(2 ** 40), Number.MAX_SAFE_INTEGER, 2 ** 62];
const DOUBLES = [0.5, -1.25, 1e300, -1e-300, Math.PI, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 63, -(2 ** 64)];

class Gen {
  constructor(readonly r: () => number) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)];
  }
  hex(n: number): string {
    let s = "";
    for (let i = 0; i < n; i++) s += "0123456789abcdef"[this.int(16)];
    return s;
  }
  /** An attribute value the SDK keeps: primitives and homogeneous arrays (with null holes). */
  value(): api.AttributeValue {
    switch (this.int(8)) {
      case 0:
        return this.pick(STRINGS);
      case 1:
        return this.pick(NUMBERS);
      case 2:
        return this.pick(DOUBLES);
      case 3:
        return this.r() < 0.5;
      case 4:
        return Array.from({ length: this.int(4) }, () => this.pick(STRINGS));
      case 5:
        return Array.from({ length: this.int(4) }, () => (this.r() < 0.2 ? null : this.pick(NUMBERS))) as number[];
      case 6:
        return Array.from({ length: 1 + this.int(3) }, () => this.pick(DOUBLES));
      default:
        return [true, false, this.r() < 0.5];
    }
  }
  attributes(max: number): api.Attributes {
    const a: api.Attributes = {};
    const n = this.int(max + 1);
    for (let i = 0; i < n; i++) a[this.pick(["messaging.system", "qos", "k", "ключ", "n"]) + i] = this.value();
    return a;
  }
  context(): api.SpanContext {
    const sc: api.SpanContext = {
      traceId: this.hex(32),
      spanId: this.hex(16),
      traceFlags: this.pick([0, 1, 3]),
      isRemote: this.r() < 0.5,
    };
    if (this.r() < 0.3) sc.traceState = api.createTraceState(`vendor=${this.hex(4)},other=x${this.int(99)}`);
    return sc;
  }
}

/** Random finished SDK spans from two providers (two resources), each with two or three tracers. */
function sdkSpans(seed: number, count: number): ReadableSpan[] {
  const g = new Gen(mulberry32(seed));
  const exporter = new InMemorySpanExporter();
  const provider = (attrs: api.Attributes, schemaUrl?: string) =>
    new BasicTracerProvider({
      sampler: new AlwaysOnSampler(),
      resource: resourceFromAttributes(attrs, schemaUrl === undefined ? {} : { schemaUrl }),
      spanProcessors: [new SimpleSpanProcessor(exporter)],
    });
  const p1 = provider({ "service.name": "svc", "service.instance.id": "n1@127.0.0.1", "host.cpus": 2 });
  const p2 = provider({ "service.name": "svc", "service.version": "ü1", ratio: 0.5 }, "https://opentelemetry.io/s/1");
  const tracers = [
    p1.getTracer("svc", "0.1.0"),
    p1.getTracer("mqtt"),
    p2.getTracer("svc", "0.1.0", { schemaUrl: "https://opentelemetry.io/schemas/1.30.0" }),
    p2.getTracer("lib-ü", "2"),
  ];
  const kinds = [api.SpanKind.INTERNAL, api.SpanKind.SERVER, api.SpanKind.CLIENT, api.SpanKind.PRODUCER];
  for (let i = 0; i < count; i++) {
    const parent = g.r() < 0.6 ? api.trace.setSpanContext(api.ROOT_CONTEXT, g.context()) : api.ROOT_CONTEXT;
    const start: api.HrTime = [1_700_000_000 + g.int(100_000_000), g.int(1_000_000_000)];
    const links = Array.from({ length: g.r() < 0.3 ? 1 + g.int(2) : 0 }, () =>
      g.r() < 0.5 ? { context: g.context() } : { context: g.context(), attributes: g.attributes(3) },
    );
    const span = g
      .pick(tracers)
      .startSpan(g.pick(NAMES), { kind: g.pick(kinds), attributes: g.attributes(6), links, startTime: start }, parent);
    const events = g.r() < 0.3 ? g.int(3) : 0;
    for (let e = 0; e < events; e++) {
      const t: api.HrTime = [start[0], g.int(1_000_000_000)];
      if (g.r() < 0.5) span.addEvent(g.pick(NAMES), t);
      else span.addEvent(g.pick(NAMES), g.attributes(3), t);
    }
    if (i === 3) for (let a = 0; a < 130; a++) span.setAttribute(`extra${a}`, a); // over the 128 limit
    if (i === 4) for (let e = 0; e < 130; e++) span.addEvent(`e${e}`); // dropped events
    const status = g.int(4);
    if (status === 1) span.setStatus({ code: api.SpanStatusCode.OK });
    else if (status === 2) span.setStatus({ code: api.SpanStatusCode.ERROR, message: g.pick(STRINGS) });
    else if (status === 3) span.setStatus({ code: api.SpanStatusCode.ERROR });
    span.end([start[0] + g.int(3), g.int(1_000_000_000)]);
  }
  return exporter.getFinishedSpans();
}

const CTX: api.SpanContext = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };
const RESOURCE = { attributes: { "service.name": "svc", bin: new Uint8Array([0, 255]) } };
const SCOPE = { name: "svc", version: "0.1.0" };

/** A deliver span as the facade records it: shared attribute objects, then its own. */
function deliverSpan(id: string, shared: object[], own: object, scope: { name: string } = SCOPE): RecordedSpan {
  return new RecordedSpan(
    "deliver a/b",
    api.SpanKind.PRODUCER,
    { ...CTX, spanId: id },
    CTX,
    [1_700_000_000, 5],
    shared as api.Attributes[],
    own as api.Attributes,
    RESOURCE,
    scope,
  );
}

/** A hand-made span in the ReadableSpan shape (as the facade's RecordedSpan), with overrides. */
function handSpan(o: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    name: "deliver a/b",
    kind: api.SpanKind.PRODUCER,
    spanContext: () => ({ ...CTX, spanId: "1111111111111111" }),
    parentSpanContext: CTX,
    startTime: [1_700_000_000, 123_456_789],
    endTime: [1_700_000_001, 0],
    status: { code: 0 },
    attributes: {},
    events: [],
    links: [],
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
    resource: RESOURCE,
    instrumentationScope: SCOPE,
    ...o,
  };
}

describe("encodeTraceExportRequest", () => {
  it("writes the SDK serializer's bytes for random batches of SDK spans", () => {
    for (let seed = 1; seed <= 40; seed++) {
      const spans = sdkSpans(seed, 1 + (seed % 7) * 9);
      // Interleave resources and scopes (the spans were made in random tracer order already).
      const ours = ourBytes(spans);
      expect(ours.equals(sdkBytes(spans)), `seed ${seed}`).toBe(true);
      expect(decodeTraceRequest(ours)).toEqual(decodeTraceRequest(sdkBytes(spans)));
    }
  });

  it("covers what the batches should: two resources, four scopes, every span field", () => {
    const spans = sdkSpans(7, 200);
    const req = decodeTraceRequest(ourBytes(spans));
    expect(req.resourceSpans).toHaveLength(2);
    expect(req.resourceSpans.map((r: Decoded) => r.schemaUrl).sort()).toEqual([
      "https://opentelemetry.io/s/1",
      undefined,
    ]); // sort() puts undefined last
    const scopes = req.resourceSpans.flatMap((r: Decoded) => r.scopeSpans);
    const scopeOf = (s: Decoded) => `${s.scope.name}@${s.scope.version ?? ""}:${s.schemaUrl ?? ""}`;
    expect(scopes.map(scopeOf).sort()).toEqual([
      "lib-ü@2:",
      "mqtt@:",
      "svc@0.1.0:",
      "svc@0.1.0:https://opentelemetry.io/schemas/1.30.0",
    ]);
    const all: Decoded[] = scopes.flatMap((s: Decoded) => s.spans);
    expect(all).toHaveLength(200);
    const values = all.flatMap((s) => s.attributes ?? []).map((kv: Decoded) => Object.keys(kv.value)[0]);
    expect(new Set(values)).toEqual(new Set(["stringValue", "intValue", "doubleValue", "boolValue", "arrayValue"]));
    expect(all.some((s) => s.traceState)).toBe(true);
    expect(all.some((s) => s.parentSpanId && (s.flags & 0x200) !== 0)).toBe(true);
    expect(all.some((s) => s.links?.some((l: Decoded) => l.traceState && l.attributes))).toBe(true);
    expect(all.some((s) => s.events?.some((e: Decoded) => e.attributes))).toBe(true);
    expect(all.some((s) => s.status.message)).toBe(true);
    expect(all.some((s) => s.droppedAttributesCount > 0)).toBe(true);
    expect(all.some((s) => s.droppedEventsCount > 0)).toBe(true);
  });

  it("writes the SDK serializer's bytes for hand-made spans with every value kind and edge", () => {
    const big = "ü".repeat(9000); // an 18000-byte string: a three-byte length
    const spans = [
      handSpan({
        attributes: {
          bytes: new Uint8Array([1, 2, 3]),
          empty: new Uint8Array(0),
          kv: { a: 1, b: ["x", null], c: { d: true } },
          nested: [[1, 2], ["a"], []],
          none: undefined,
          nothing: null,
          min: -(2 ** 63),
          beyond: 2 ** 63,
          negZero: -0,
          big,
          10: "integer-like key",
        },
      }),
      handSpan({
        kind: api.SpanKind.INTERNAL,
        parentSpanContext: undefined,
        startTime: [0, 0],
        endTime: [18_446_744_073, 709_551_615], // the largest time that fits uint64 nanoseconds
        status: { code: 2, message: "boom ✗" },
        droppedAttributesCount: 300,
        droppedEventsCount: 1,
        droppedLinksCount: 70000,
        events: [
          { time: [4_294_967_296, 1], name: "e1" },
          { time: [1, 999_999_999], name: "", attributes: { k: "v" }, droppedAttributesCount: 5 },
        ],
        links: [
          { context: { ...CTX, isRemote: true, traceState: { serialize: () => "k=v" } }, droppedAttributesCount: 2 },
          { context: { ...CTX, traceFlags: 0 }, attributes: { n: 1.5 } },
        ],
        instrumentationScope: { name: "", schemaUrl: "https://s" },
        resource: { attributes: {}, schemaUrl: "https://r" },
      }),
      handSpan({
        spanContext: () => ({ ...CTX, traceState: { serialize: () => "" } }), // an empty trace state is left out
        parentSpanContext: { ...CTX, spanId: "", isRemote: true }, // no parent id: left out, flags keep is_remote
        name: "n".repeat(20000),
      }),
    ];
    const ours = ourBytes(spans);
    expect(ours.equals(sdkBytes(spans))).toBe(true);
    const req = decodeTraceRequest(ours);
    const attrs = req.resourceSpans[0].scopeSpans[0].spans[0].attributes as Decoded[];
    const byKey = Object.fromEntries(attrs.map((kv) => [kv.key, kv.value]));
    expect(attrs[0].key).toBe("10");
    expect(byKey.bytes).toEqual({ bytesValue: "010203" });
    expect(byKey.min).toEqual({ intValue: -(2n ** 63n) });
    expect(byKey.beyond).toEqual({ doubleValue: 2 ** 63 });
    expect(byKey.none).toEqual({});
    expect(byKey.big).toEqual({ stringValue: big });
    expect(byKey.kv.kvlistValue.values).toHaveLength(3);
    expect(req.resourceSpans[0].resource.attributes[1].value).toEqual({ bytesValue: "00ff" });
    const second = req.resourceSpans[1].scopeSpans[0];
    expect(second.schemaUrl).toBe("https://s");
    expect(second.spans[0].endTimeUnixNano).toBe(2n ** 64n - 1n);
  });

  it("encodes again from its caches the same bytes", () => {
    const spans = sdkSpans(3, 30);
    expect(ourBytes(spans).equals(ourBytes(spans))).toBe(true);
    expect(ourBytes([])).toHaveLength(0);
  });

  it("writes the merged attributes' bytes for spans whose attributes come in shared parts and an own part", () => {
    const node = { "messaging.system": "mqtt", "svc.node": "n1" };
    const sharedA = [node, { "messaging.destination.name": "a/ü", "messaging.mqtt.qos": 1 }];
    const sharedB = [{ big: "x".repeat(300), list: ["a", "b"] }, node];
    const parts = (shared: object[], own: object, id: string) => deliverSpan(id, shared, own);
    const spans = [
      parts(sharedA, { "messaging.consumer.id": "s1", "svc.delivery.qos": 0 }, "1111111111111111"),
      handSpan({ attributes: { plain: true } }),
      parts(sharedB, {}, "2222222222222222"),
      parts(sharedA, { "messaging.consumer.id": "s2", "svc.delivery.qos": 2 }, "3333333333333333"),
    ];
    // The SDK's serializer reads `attributes` (the parts merged), ours the parts.
    expect(ourBytes(spans).equals(sdkBytes(spans))).toBe(true);
    expect(spans[3].attributes).toEqual({
      ...node,
      ...sharedA[1],
      "messaging.consumer.id": "s2",
      "svc.delivery.qos": 2,
    });
  });

  it("puts spans of equal scopes (distinct objects) in one ScopeSpans, as the SDK's transformer", () => {
    // The facade's recorded spans carry their own scope object, equal to the tracer's.
    const other = { name: "svc", version: "0.1.0" };
    const spans = [handSpan(), handSpan({ instrumentationScope: other, name: "b" }), handSpan({ name: "c" })];
    const ours = decodeTraceRequest(ourBytes(spans));
    const sdk = decodeTraceRequest(sdkBytes(spans));
    // The SDK's protobuf serializer groups by object: svc (a, c), svc again (b); ours: svc (a, b, c).
    expect(sdk.resourceSpans[0].scopeSpans).toHaveLength(2);
    const [first, second] = sdk.resourceSpans[0].scopeSpans;
    const [a, c] = first.spans;
    const [b] = second.spans;
    expect(ours).toEqual({
      resourceSpans: [{ ...sdk.resourceSpans[0], scopeSpans: [{ ...first, spans: [a, b, c] }] }],
    });
  });
});

describe("SpanBatch (spans encoded as they end)", () => {
  const batchBytes = (batch: SpanBatch, spans: readonly object[]): Buffer => {
    for (const span of spans) batch.add(span as unknown as OtlpSpan);
    expect(batch.length).toBe(spans.length);
    const taken = batch.take();
    expect(taken.length).toBe(spans.length);
    expect(batch.length).toBe(0);
    const copy = Buffer.from(taken.bytes);
    // As after a successful export: the next take() may write into these bytes.
    batch.recycle(taken);
    return copy;
  };

  it("takes the request encodeTraceExportRequest writes for the same spans, batch after batch", () => {
    // One batch object for every seed: its group buffers are reused, and the order of first
    // appearance of resources and scopes starts over with each batch.
    const batch = new SpanBatch();
    for (let seed = 1; seed <= 30; seed++) {
      const spans = sdkSpans(100 + seed, 1 + (seed % 5) * 13);
      expect(batchBytes(batch, spans).equals(sdkBytes(spans)), `seed ${seed}`).toBe(true);
    }
    expect(batchBytes(batch, [])).toHaveLength(0);
  });

  it("writes shared attribute parts and equal scopes of distinct objects as the whole-batch encoder", () => {
    const shared = [{ "messaging.system": "mqtt" }, { "messaging.destination.name": "a/ü", "messaging.mqtt.qos": 1 }];
    const deliver = (id: string, scope: object) =>
      deliverSpan(id, shared, { "messaging.consumer.id": `c${id[0]}` }, scope as { name: string });
    const spans = [
      deliver("1111111111111111", SCOPE),
      handSpan({ name: "big", attributes: { s: "x".repeat(70_000) } }), // grows the group's buffer
      deliver("2222222222222222", { name: "svc", version: "0.1.0" }),
      handSpan({ instrumentationScope: { name: "other" } }),
      deliver("3333333333333333", SCOPE),
    ];
    const batch = new SpanBatch();
    expect(batchBytes(batch, spans).equals(ourBytes(spans))).toBe(true);
    expect(batchBytes(batch, spans.slice(2)).equals(ourBytes(spans.slice(2)))).toBe(true);
  });

  it("writes runs of recorded spans as the SDK serializer, whatever varies", () => {
    // Deliver spans of a few messages in random order: each run shares trace, parent, name, kind
    // and shared attributes; any of them may change from one span to the next, and some spans
    // have a trace state, a remote parent, no parent id or other flags.
    const g = new Gen(mulberry32(77));
    // Arrays of shared parts, some parts in several arrays (each part is encoded once per request).
    const node = { "messaging.system": "mqtt" };
    const shareds = [[{ a: "x" }], [node, { a: "y", n: 2 }], [node, { big: "ü".repeat(200) }], []];
    const parents = [CTX, { ...CTX, spanId: "a1a1a1a1a1a1a1a1", isRemote: true }, { ...CTX, spanId: "" }];
    const traces = [CTX.traceId, "0af7651916cd43dd8448eb211c80319c"];
    // Own attributes: fresh objects, or frozen ones reused by many spans (a subscriber's, encoded once).
    const frozenOwns = [
      Object.freeze({}),
      ...STRINGS.map((id, i) => Object.freeze({ "messaging.consumer.id": id, "svc.delivery.qos": i % 3 })),
    ];
    const own = () =>
      g.r() < 0.4
        ? g.pick(frozenOwns)
        : g.r() < 0.3
          ? {}
          : { "messaging.consumer.id": g.pick(STRINGS), "svc.delivery.qos": g.int(3) };
    const batch = new SpanBatch();
    for (let round = 0; round < 20; round++) {
      const spans: object[] = [];
      for (let i = 0; i < 60; i++) {
        const ctx: api.SpanContext = {
          traceId: g.pick(traces),
          spanId: g.hex(16),
          traceFlags: g.r() < 0.9 ? 1 : 3,
        };
        if (g.r() < 0.1) ctx.traceState = api.createTraceState("k=v");
        spans.push(
          new RecordedSpan(
            g.pick(["deliver a/b", "ack a/b", "deliver ü/日本"]),
            g.pick([api.SpanKind.PRODUCER, api.SpanKind.CONSUMER, api.SpanKind.INTERNAL]),
            ctx,
            g.pick(parents),
            [1_700_000_000 + g.int(1000), g.int(1_000_000_000)],
            g.pick(shareds),
            own(),
            RESOURCE,
            SCOPE,
          ),
        );
        if (g.r() < 0.1) spans.push(handSpan({ attributes: { plain: g.int(5) } }));
      }
      expect(batchBytes(batch, spans).equals(sdkBytes(spans)), `round ${round}`).toBe(true);
    }
  });

  it("writes a part again when it comes back after many others (only the last spans' parts are kept)", () => {
    // 40 messages' parts in one batch, each span also sharing a part of a message 20 earlier (out
    // of the recent parts by then) and the node's constant part.
    const node = { "messaging.system": "mqtt", "svc.node": "n1" };
    const parts = Array.from({ length: 40 }, (_, i) => ({ "messaging.destination.name": `t/${i}`, i }));
    const spans = parts.flatMap((part, i) => [
      deliverSpan(`${(i + 1).toString(16).padStart(2, "0")}11111111111111`, [node, part], { n: i }),
      deliverSpan(`${(i + 1).toString(16).padStart(2, "0")}22222222222222`, [node, parts[(i + 20) % 40]], {}),
    ]);
    expect(batchBytes(new SpanBatch(), spans).equals(sdkBytes(spans))).toBe(true);
  });

  it("leaves the batch as it was when a span cannot be encoded", () => {
    const batch = new SpanBatch();
    const good = handSpan();
    batch.add(good as unknown as OtlpSpan);
    const failing = (o: Record<string, unknown>) =>
      handSpan({
        ...o,
        spanContext: () => {
          throw new Error("no context");
        },
      });
    expect(() => batch.add(failing({}) as unknown as OtlpSpan)).toThrow("no context");
    // A failing span of a new resource and scope adds no empty group either.
    const elsewhere = failing({ resource: { attributes: {} }, instrumentationScope: { name: "x" } });
    expect(() => batch.add(elsewhere as unknown as OtlpSpan)).toThrow("no context");
    expect(batch.length).toBe(1);
    expect(Buffer.from(batch.take().bytes).equals(ourBytes([good]))).toBe(true);
  });
});

interface Received {
  url: string;
  headers: IncomingMessage["headers"];
  body: Buffer;
}

describe("OtlpProtoTraceExporter end to end", () => {
  let server: Server;
  let endpoint: string;
  const received: Received[] = [];

  beforeAll(async () => {
    server = createServer((rq, rs) => {
      const chunks: Buffer[] = [];
      rq.on("data", (c: Buffer) => chunks.push(c));
      rq.on("end", () => {
        received.push({ url: rq.url ?? "", headers: rq.headers, body: Buffer.concat(chunks) });
        rs.writeHead(200, { "content-type": "application/x-protobuf" }).end();
      });
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}/collector/v1/traces`;
  });
  afterAll(async () => {
    await new Promise((resolve) => server.close(resolve));
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    received.length = 0;
  });

  const exportSpans = (exporter: OtlpProtoTraceExporter, spans: ReadableSpan[]) =>
    new Promise<number>((resolve) =>
      exporter.export({ bytes: ourBytes(spans), length: spans.length }, (r) => resolve(r.code)),
    );
  const body = (r: Received): Buffer => (r.headers["content-encoding"] === "gzip" ? gunzipSync(r.body) : r.body);

  it("posts our encoding to OTEL_EXPORTER_OTLP_TRACES_ENDPOINT with OTEL_EXPORTER_OTLP_HEADERS", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint);
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", "x-svc-token=s3cr3t,x-other=1");
    const exporter = new OtlpProtoTraceExporter();
    const spans = sdkSpans(11, 25);
    expect(await exportSpans(exporter, spans)).toBe(api.SpanStatusCode.UNSET); // ExportResultCode.SUCCESS = 0
    await exporter.shutdown();
    expect(received).toHaveLength(1);
    const [r] = received;
    expect(r.url).toBe("/collector/v1/traces");
    expect(r.headers["content-type"]).toBe("application/x-protobuf");
    expect(r.headers["x-svc-token"]).toBe("s3cr3t");
    expect(r.headers["content-encoding"]).toBeUndefined();
    expect(body(r).equals(sdkBytes(spans))).toBe(true);
    expect(decodeTraceRequest(body(r)).resourceSpans).toHaveLength(2);
  });

  it("compresses with OTEL_EXPORTER_OTLP_TRACES_COMPRESSION=gzip", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint);
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_COMPRESSION", "gzip");
    const exporter = new OtlpProtoTraceExporter();
    const spans = sdkSpans(12, 40);
    expect(await exportSpans(exporter, spans)).toBe(0);
    await exporter.shutdown();
    expect(received.map((r) => r.headers["content-encoding"])).toEqual(["gzip"]);
    expect(body(received[0]).equals(sdkBytes(spans))).toBe(true);
  });

  it("is the exporter startTracingSdk sets up for http/protobuf", async () => {
    vi.stubEnv("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", endpoint);
    vi.stubEnv("OTEL_EXPORTER_OTLP_HEADERS", "x-svc-token=abc");
    vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf");
    const sdk = await startTracingSdk("n1@127.0.0.1", { maxDeliverSpans: 10, samplingRun: 16 });
    const span = sdk.tracing.start("connect", { parent: null, kind: "server" });
    span.setAttribute("messaging.client.id", "c1");
    // A recorded (facade) child: its own scope object, equal to the tracer's.
    sdk.tracing.recordChild("deliver a/b", span.spanContext(), "producer", [{ qos: 1 }]);
    span.end();
    await sdk.shutdown(); // flushes the batch
    expect(received).toHaveLength(1);
    expect(received[0].headers["x-svc-token"]).toBe("abc");
    expect(received[0].headers["content-type"]).toBe("application/x-protobuf");
    const req = decodeTraceRequest(body(received[0]));
    expect(req.resourceSpans).toHaveLength(1);
    const attrs = Object.fromEntries(
      req.resourceSpans[0].resource.attributes.map((kv: Decoded) => [kv.key, kv.value.stringValue]),
    );
    expect(attrs["service.instance.id"]).toBe("n1@127.0.0.1");
    const [scope] = req.resourceSpans[0].scopeSpans;
    expect(req.resourceSpans[0].scopeSpans).toHaveLength(1);
    expect(scope.scope.name).toBe("svc");
    const byName = Object.fromEntries(scope.spans.map((s: Decoded) => [s.name, s]));
    expect(Object.keys(byName).sort()).toEqual(["connect", "deliver a/b"]);
    expect(byName["deliver a/b"].parentSpanId).toBe(byName.connect.spanId);
    expect(byName["deliver a/b"].attributes).toEqual([{ key: "qos", value: { intValue: 1n } }]);
    expect(byName.connect.kind).toBe(2); // SPAN_KIND_SERVER
  });
});
