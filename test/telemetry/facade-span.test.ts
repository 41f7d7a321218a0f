// The facade's own live span (telemetry/facade-span.ts) behaves as the SDK's Span for everything a
// span processor or exporter sees: the same operations on both give the same finished span
// (attributes with their validity rules and limit, events, exceptions, links, status, name, the
// dropped counts, nothing changing after the end).
import * as api from "@opentelemetry/api";
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import { describe, expect, it } from "vitest";
import { FacadeSpan, newSpanId, newTraceId, type RecordedSpan } from "../../src/telemetry/facade-span.ts";

const PARENT: api.SpanContext = {
  traceId: "4bf92f3577b34da6a3ce929d0e0e4736",
  spanId: "00f067aa0ba902b7",
  traceFlags: 1,
};

/** Applies the same operations to an SDK span and to a facade span; answers both finished. */
function both(ops: (span: api.Span) => void, attributes?: api.Attributes) {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const ctx = api.trace.setSpanContext(api.ROOT_CONTEXT, PARENT);
  const sdkSpan = provider.getTracer("t").startSpan("op", { kind: api.SpanKind.SERVER, attributes }, ctx);
  ops(sdkSpan);
  const recorded: (FacadeSpan | RecordedSpan)[] = [];
  const recorder = {
    resource: {},
    scope: { name: "t" },
    record: (s: FacadeSpan | RecordedSpan) => recorded.push(s),
    recordGroup: () => {
      throw new Error("a facade span records itself alone");
    },
  };
  const sc = { traceId: PARENT.traceId, spanId: newSpanId(), traceFlags: 1 };
  const ours = new FacadeSpan("op", api.SpanKind.SERVER, sc, PARENT, attributes, undefined, recorder);
  ops(ours);
  const [sdk] = exporter.getFinishedSpans();
  expect(recorded).toHaveLength(ours.ended ? 1 : 0);
  return { sdk, ours };
}

/** What processors and exporters read of a finished span, times left out. */
function view(s: {
  name: string;
  kind: number;
  attributes: api.Attributes;
  events: readonly { name: string; attributes?: api.Attributes; droppedAttributesCount?: number }[];
  links: readonly api.Link[];
  status: api.SpanStatus;
  ended: boolean;
  droppedAttributesCount: number;
  droppedEventsCount: number;
  droppedLinksCount: number;
  parentSpanContext?: api.SpanContext;
}) {
  return {
    name: s.name,
    kind: s.kind,
    attributes: s.attributes,
    events: s.events.map((e) => ({ name: e.name, attributes: e.attributes, dropped: e.droppedAttributesCount ?? 0 })),
    links: s.links.map((l) => l.context.spanId),
    status: s.status,
    ended: s.ended,
    dropped: [s.droppedAttributesCount, s.droppedEventsCount, s.droppedLinksCount],
    parent: s.parentSpanContext?.spanId,
  };
}

describe("FacadeSpan", () => {
  it("keeps attributes as the SDK does: valid keys and values only, arrays copied, 128 at most", () => {
    const arr = ["a", "b"];
    const { sdk, ours } = both(
      (s) => {
        s.setAttribute("text", "x").setAttribute("n", 1.5).setAttribute("flag", false);
        s.setAttribute("", "empty key");
        s.setAttribute("obj", { a: 1 } as unknown as api.AttributeValue);
        s.setAttribute("mixed", [1, "a"] as unknown as api.AttributeValue);
        s.setAttribute("nulls", [null, "a", undefined] as unknown as api.AttributeValue);
        s.setAttribute("none", undefined as unknown as api.AttributeValue);
        s.setAttribute("arr", arr);
        s.setAttribute("text", "replaced");
        for (let i = 0; i < 130; i++) s.setAttribute(`k${i}`, i);
        s.setAttributes({ text: "again", more: 1 });
        s.end();
        s.setAttribute("late", 1);
      },
      { initial: "i" },
    );
    arr.push("c");
    expect(view(ours)).toEqual(view(sdk));
    expect(ours.droppedAttributesCount).toBeGreaterThan(0);
  });

  it("keeps shared attribute objects as the SDK would set their entries, only as its first attributes", () => {
    const node = { "messaging.system": "mqtt", "svc.node": "n1" };
    const message = { "messaging.mqtt.qos": 1, "messaging.mqtt.retain": false };
    const { sdk, ours } = both((s) => {
      if (s instanceof FacadeSpan) expect(s.shareAttributes([node, message])).toBe(true);
      else s.setAttributes({ ...node, ...message });
      s.setAttribute("svc.deliveries", 3);
      if (s instanceof FacadeSpan) expect(s.shareAttributes([{ other: 1 }])).toBe(false); // has attributes
      s.end();
    });
    expect(view(ours)).toEqual(view(sdk));
    expect(ours.attributes).toEqual({ ...node, ...message, "svc.deliveries": 3 });
    expect(ours.attributeParts?.[0]).toEqual([node, message]); // kept, not copied
    const { ours: started } = both((s) => s.end(), { initial: "i" });
    expect(started.shareAttributes([{ a: 1 }])).toBe(false); // ended, and with attributes
    const { ours: open } = both(() => {});
    const many = Object.fromEntries(Array.from({ length: 129 }, (_, i) => [`k${i}`, i]));
    expect(open.shareAttributes([many])).toBe(false); // over the limit: left to setAttributes
    expect(open.attributes).toEqual({});
  });

  it("sets a key of a shared object as the SDK would, leaving the shared object as it was", () => {
    const node = Object.freeze({ "messaging.system": "mqtt", "svc.node": "n1" });
    const { sdk, ours } = both((s) => {
      if (s instanceof FacadeSpan) expect(s.shareAttributes([node])).toBe(true);
      else s.setAttributes(node);
      s.setAttribute("svc.node", "n2");
      s.setAttribute("late", true);
      s.end();
    });
    expect(view(ours)).toEqual(view(sdk));
    expect(ours.attributes).toEqual({ "messaging.system": "mqtt", "svc.node": "n2", late: true });
    expect(ours.attributeParts).toBeUndefined();
    expect(node["svc.node"]).toBe("n1");
  });

  it("records events, exceptions, links, status and name changes as the SDK does", () => {
    const link = { context: { ...PARENT, spanId: "1111111111111111" } };
    const { sdk, ours } = both((s) => {
      s.addEvent("plain");
      s.addEvent("with attributes", { a: 1, "": 2, bad: {} as unknown as api.AttributeValue });
      s.addEvent("with a time", [1_700_000_000, 0]);
      s.recordException(new TypeError("boom"));
      s.recordException("just text");
      s.recordException({ code: 42, message: "coded" });
      s.addLink(link);
      s.addLinks([link]);
      s.setStatus({ code: api.SpanStatusCode.UNSET });
      s.setStatus({ code: api.SpanStatusCode.ERROR, message: "first" });
      s.setStatus({ code: api.SpanStatusCode.OK, message: "ignored message" });
      s.setStatus({ code: api.SpanStatusCode.ERROR, message: "after ok" });
      s.updateName("renamed");
      s.end();
      s.updateName("too late");
      s.addEvent("too late");
      s.setStatus({ code: api.SpanStatusCode.ERROR });
      s.end();
    });
    const o = view(ours);
    const k = view(sdk);
    // The stack differs by a frame or two between the calls: compare the rest of the event.
    const noStack = (v: typeof o) =>
      v.events.map((e) => ({ ...e, attributes: { ...e.attributes, "exception.stacktrace": 0 } }));
    expect(noStack(o)).toEqual(noStack(k));
    expect({ ...o, events: 0 }).toEqual({ ...k, events: 0 });
    expect(ours.duration[0] >= 0 && ours.endTime[0] >= ours.startTime[0]).toBe(true);
  });

  it("is recorded once, at its end, and then no longer recording", () => {
    const { ours } = both((s) => {
      expect(s.isRecording()).toBe(true);
      s.end();
      expect(s.isRecording()).toBe(false);
      s.end();
    });
    expect(ours.ended).toBe(true);
  });

  it("draws ids that are hex, of the right length and never all zeros", () => {
    const seen = new Set<string>();
    for (let i = 0; i < 2000; i++) {
      const s = newSpanId();
      const t = newTraceId();
      expect(s).toMatch(/^[0-9a-f]{16}$/);
      expect(t).toMatch(/^[0-9a-f]{32}$/);
      expect(api.isSpanContextValid({ traceId: t, spanId: s, traceFlags: 1 })).toBe(true);
      seen.add(s);
    }
    expect(seen.size).toBe(2000);
  });
});
