// The facade's sampling fast path (Tracing.startSampled): root spans drawn against the configured
// root ratio and, with a parent-based sampler, a parent's sampled flag deciding, both without
// making a span or asking the SDK's sampler when the span is dropped; a span the facade sampled
// is recorded without a second draw. Also OTEL_TRACES_SAMPLER(_ARG) parsing (envSampler) and the
// wiring through startTracingSdk.

import { AsyncLocalStorage } from "node:async_hooks";
import * as api from "@opentelemetry/api";
import * as base from "@opentelemetry/sdk-trace-base";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  ParentBasedSampler,
  type Sampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from "vitest";
import { PRESAMPLED, type SamplingHint, Tracing } from "../../src/telemetry/tracing.ts";
import { envSampler, startTracingSdk, type TracingSdk } from "../../src/tracing-sdk.ts";

const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT = "00f067aa0ba902b7";

/** A sampler counting its decisions (wrapped the way main.ts wraps the configured one). */
function counting(inner: Sampler): Sampler & { calls: number } {
  const s = {
    calls: 0,
    shouldSample(...args: Parameters<Sampler["shouldSample"]>) {
      s.calls++;
      return args[0].getValue(PRESAMPLED) === true
        ? { decision: base.SamplingDecision.RECORD_AND_SAMPLED }
        : inner.shouldSample(...args);
    },
    toString: () => "counting",
  };
  return s;
}

function setup(inner: Sampler, hint: SamplingHint | null) {
  const exporter = new InMemorySpanExporter();
  const sampler = counting(inner);
  const provider = new BasicTracerProvider({ sampler, spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const t = new Tracing(api, provider.getTracer("test"), 10, hint);
  return { t, sampler, exporter };
}

afterEach(() => {
  vi.restoreAllMocks();
});

/** A global context manager over AsyncLocalStorage, as the SDK's for Node (api.context.disable() ends it). */
function useAsyncLocalContext(): void {
  const als = new AsyncLocalStorage<api.Context>();
  api.context.setGlobalContextManager({
    active: () => als.getStore() ?? api.ROOT_CONTEXT,
    with: (ctx, fn, thisArg, ...args) => als.run(ctx, () => fn.call(thisArg, ...args)),
    bind: (_ctx, target) => target,
    enable() {
      return this;
    },
    disable() {
      return this;
    },
  });
}

describe("Tracing.startSampled", () => {
  const ratio = (r: number) => new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(r) });

  it("dropped root spans: no span, no sampler call, one Math.random() draw per sampled span", () => {
    const { t, sampler, exporter } = setup(ratio(0.01), { root: 0.01, parentBased: true });
    const random = vi.spyOn(Math, "random").mockReturnValue(0.5);
    // The draw 0.5 at 1%: floor(ln(0.5) / ln(0.99)) = 68 root spans dropped, then one sampled.
    for (let i = 0; i < 68; i++) {
      const o = i % 2 === 0 ? { kind: "server" as const } : { parent: null };
      expect(t.startSampled("publish ", "a/b", o)).toBeUndefined();
    }
    expect(random).toHaveBeenCalledTimes(1);
    expect(sampler.calls).toBe(0);
    expect(exporter.getFinishedSpans()).toHaveLength(0);
    const sampled = t.startSampled("publish ", "a/b", { kind: "server" });
    expect(sampled?.isRecording()).toBe(true);
    sampled?.end();
    expect(exporter.getFinishedSpans()).toHaveLength(1);
    // The next root span draws again (the SDK's id generator drew too, for the sampled span).
    const draws = random.mock.calls.length;
    expect(t.startSampled("publish ", "a/b", { kind: "server" })).toBeUndefined();
    expect(random).toHaveBeenCalledTimes(draws + 1);
  });

  it("a sampled root span is recorded without a second draw by the configured sampler", () => {
    // The configured root ratio is 1%: the sampler itself would almost never sample these.
    const { t, exporter } = setup(ratio(0.01), { root: 0.01, parentBased: true });
    vi.spyOn(Math, "random").mockReturnValue(0.001);
    const spans = Array.from({ length: 20 }, () => t.startSampled("publish ", "a/b", { kind: "server" }));
    for (const s of spans) {
      expect(s?.isRecording()).toBe(true);
      s?.end();
    }
    const done = exporter.getFinishedSpans();
    expect(done).toHaveLength(20);
    expect(done[0].name).toBe("publish a/b");
    expect(done[0].parentSpanContext).toBeUndefined();
    expect(done[0].kind).toBe(api.SpanKind.SERVER);
  });

  it("sampled root spans come at the ratio, with the gaps of independent draws", () => {
    // 1%: about 1,000 of 100,000, the gaps between them geometric (mean 99, as many below the
    // median 68 as above it).
    const { t } = setup(ratio(0.01), { root: 0.01, parentBased: true });
    const gaps: number[] = [];
    let last = -1;
    for (let i = 0; i < 100_000; i++) {
      const s = t.startRoot("p ", "x", {});
      if (s === undefined) continue;
      s.end();
      if (last >= 0) gaps.push(i - last - 1);
      last = i;
    }
    expect(gaps.length).toBeGreaterThan(850);
    expect(gaps.length).toBeLessThan(1150);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    expect(mean).toBeGreaterThan(85);
    expect(mean).toBeLessThan(115);
    const below = gaps.filter((g) => g < 68).length / gaps.length;
    expect(below).toBeGreaterThan(0.42);
    expect(below).toBeLessThan(0.58);
  });

  it("with a sampling run, sampled root spans come in runs (roots close together), at the ratio", () => {
    const { t } = setup(ratio(0.01), { root: 0.01, parentBased: true, run: 16 });
    // A clock that stands still: every run is within its 1 ms window, whatever this machine's speed.
    vi.spyOn(performance, "now").mockReturnValue(1000);
    let sampled = 0;
    let runs = 0;
    let inRun = false;
    for (let i = 0; i < 1_000_000; i++) {
      const s = t.startRoot("p ", "x", {});
      if (s !== undefined) s.end();
      if (s !== undefined && !inRun) runs++;
      sampled += s === undefined ? 0 : 1;
      inRun = s !== undefined;
    }
    // About 10,000 sampled roots in about 625 runs of 16 (a gap of 0 joins two).
    expect(sampled).toBeGreaterThan(7500);
    expect(sampled).toBeLessThan(12500);
    expect(runs).toBeGreaterThan(sampled / 32);
    // Every run is 16 roots long but the last one, which the loop's end may cut short.
    expect(runs).toBeLessThanOrEqual(Math.ceil(sampled / 16));
  });

  it("the root draw follows the ratio", () => {
    const { t } = setup(ratio(0.25), { root: 0.25, parentBased: true });
    let n = 0;
    for (let i = 0; i < 4000; i++) {
      const s = t.startSampled("p ", "x");
      if (s !== undefined) {
        n++;
        s.end();
      }
    }
    expect(n).toBeGreaterThan(800);
    expect(n).toBeLessThan(1200);
  });

  it("parent-based: a traceparent flagged 00 drops the span without making one; 01 makes a child", () => {
    const { t, sampler, exporter } = setup(ratio(0), { root: 0, parentBased: true });
    const random = vi.spyOn(Math, "random");
    expect(t.startSampled("publish ", "a", { parent: { traceparent: `00-${TRACE}-${PARENT}-00` } })).toBeUndefined();
    expect(sampler.calls).toBe(0);
    expect(random).not.toHaveBeenCalled();
    const s = t.startSampled("publish ", "a", { parent: { traceparent: `00-${TRACE}-${PARENT}-01` } });
    expect(s?.isRecording()).toBe(true);
    s?.end();
    const [d] = exporter.getFinishedSpans();
    expect(d.spanContext().traceId).toBe(TRACE);
    expect(d.parentSpanContext?.spanId).toBe(PARENT);
  });

  it("an invalid traceparent is a root span (drawn against the root ratio)", () => {
    const { t } = setup(ratio(1), { root: 1, parentBased: true });
    const s = t.startSampled("p ", "x", { parent: { traceparent: `ff-${TRACE}-${PARENT}-01` } });
    expect(s?.isRecording()).toBe(true);
    expect(s?.spanContext().traceId).not.toBe(TRACE);
  });

  it("parent-based: the active span decides (sampled: a child; unsampled: nothing)", () => {
    // Active context needs a context manager: use the API's with() over a set span.
    const { t, exporter } = setup(ratio(1), { root: 1, parentBased: true });
    const mgr = new (class {
      cur: api.Context = api.ROOT_CONTEXT;
      active() {
        return this.cur;
      }
      with<A extends unknown[], F extends (...a: A) => ReturnType<F>>(
        ctx: api.Context,
        fn: F,
        thisArg?: unknown,
        ...a: A
      ) {
        const prev = this.cur;
        this.cur = ctx;
        try {
          return fn.call(thisArg, ...a);
        } finally {
          this.cur = prev;
        }
      }
      bind<T>(_c: api.Context, target: T) {
        return target;
      }
      enable() {
        return this;
      }
      disable() {
        return this;
      }
    })();
    api.context.setGlobalContextManager(mgr);
    try {
      const parent = t.start("api", { parent: null });
      t.with(parent, () => {
        const c = t.startSampled("publish ", "x");
        expect(c?.spanContext().traceId).toBe(parent.spanContext().traceId);
        c?.end();
      });
      parent.end();
      const unsampled = api.trace.wrapSpanContext({ traceId: TRACE, spanId: PARENT, traceFlags: 0 });
      t.with(unsampled, () => expect(t.startSampled("publish ", "x")).toBeUndefined());
      const c = exporter.getFinishedSpans().find((s) => s.name === "publish x");
      expect(c?.parentSpanContext?.spanId).toBe(parent.spanContext().spanId);
    } finally {
      api.context.disable();
    }
  });

  it("with(): the span is the active one, in a context that behaves as the API's setSpan() context", async () => {
    const { t } = setup(ratio(1), { root: 1, parentBased: true });
    // The facade's small context is used (the API was seen to read the span from it).
    expect((t as unknown as { spanKey: symbol | null }).spanKey).not.toBeNull();
    useAsyncLocalContext();
    const key = api.createContextKey("k");
    try {
      const outer = t.start("outer", { parent: null });
      const inner = t.start("inner", { parent: null });
      const seen = await api.context.with(api.context.active().setValue(key, "v"), () =>
        t.with(
          outer,
          async (a: number) => {
            const ctx = api.context.active();
            const nested = t.with(inner, () => api.trace.getActiveSpan());
            await Promise.resolve(); // still active after an await
            return {
              a,
              active: api.trace.getActiveSpan(),
              nested,
              parentValue: ctx.getValue(key),
              set: api.trace.getSpan(ctx.setValue(api.createContextKey("x"), 1)),
              setValue: ctx.setValue(key, "w").getValue(key),
              deleted: api.trace.getSpan(api.trace.deleteSpan(ctx)),
              deletedValue: api.trace.deleteSpan(ctx).getValue(key),
              replaced: api.trace.getSpan(api.trace.setSpan(ctx, inner)),
            };
          },
          7,
        ),
      );
      expect(seen).toEqual({
        a: 7,
        active: outer,
        nested: inner,
        parentValue: "v",
        set: outer,
        setValue: "w",
        deleted: undefined,
        deletedValue: "v",
        replaced: inner,
      });
      expect(api.trace.getActiveSpan()).toBeUndefined();
    } finally {
      api.context.disable();
    }
  });

  it("run(): the span is active for the synchronous part only; with() inside it wins, its continuations keep theirs", async () => {
    const { t, exporter } = setup(ratio(1), { root: 1, parentBased: true });
    useAsyncLocalContext();
    try {
      const publish = t.start("publish", { parent: null });
      const action = t.start("action", { parent: null });
      let later: Promise<api.Span | undefined> = Promise.resolve(undefined);
      let inWith: Promise<api.Span | undefined> = Promise.resolve(undefined);
      const seen = t.run(
        publish,
        (n: number) => {
          // A child started without a parent, as an internal publish is.
          const child = t.startSampled("child ", "x");
          child?.end();
          later = Promise.resolve().then(() => api.trace.getActiveSpan());
          const nested = t.with(action, () => {
            inWith = Promise.resolve().then(() => api.trace.getActiveSpan());
            return t.startSampled("republish ", "x");
          });
          nested?.end();
          return { n, child, nested };
        },
        3,
      );
      expect(seen.n).toBe(3);
      expect(seen.child?.spanContext().traceId).toBe(publish.spanContext().traceId);
      expect(seen.nested?.spanContext().traceId).toBe(action.spanContext().traceId);
      const parentOf = (name: string) =>
        exporter.getFinishedSpans().find((s) => s.name === name)?.parentSpanContext?.spanId;
      expect(parentOf("child x")).toBe(publish.spanContext().spanId);
      expect(parentOf("republish x")).toBe(action.spanContext().spanId);
      // Continuations: none of run()'s own, with()'s through the async-local context.
      expect(await later).toBeUndefined();
      expect(await inWith).toBe(action);
      // Outside: nothing active, and a root span again.
      expect(t.startSampled("after ", "x")?.spanContext().traceId).not.toBe(publish.spanContext().traceId);
    } finally {
      api.context.disable();
    }
  });

  it("run(..., fromRoot): the span is active over the root context, not over the caller's", async () => {
    const { t } = setup(ratio(1), { root: 1, parentBased: true });
    useAsyncLocalContext();
    try {
      const KEY = api.createContextKey("caller's value");
      const outer = t.start("outer", { parent: null });
      const publish = t.start("publish", { parent: null });
      const seen = (fromRoot: boolean) =>
        api.context.with(api.trace.setSpan(api.ROOT_CONTEXT, outer).setValue(KEY, "v"), () =>
          t.run(
            publish,
            () => {
              // What a child started without a parent inside sees (the facade's active context).
              const child = t.startSampled("child ", "x");
              child?.end();
              return { trace: child?.spanContext().traceId, withValue: t.with(publish, () => api.context.active()) };
            },
            undefined,
            fromRoot,
          ),
        );
      const over = seen(false);
      const root = seen(true);
      expect(over.trace).toBe(publish.spanContext().traceId);
      expect(root.trace).toBe(publish.spanContext().traceId);
      expect(over.withValue.getValue(KEY)).toBe("v");
      expect(root.withValue.getValue(KEY)).toBeUndefined();
      expect(api.trace.getSpan(root.withValue)).toBe(publish);
    } finally {
      api.context.disable();
    }
  });

  it("always_off (not parent-based, ratio 0) drops even a sampled traceparent", () => {
    const { t, sampler } = setup(new AlwaysOffSampler(), { root: 0, parentBased: false });
    expect(t.startSampled("p ", "x", { parent: { traceparent: `00-${TRACE}-${PARENT}-01` } })).toBeUndefined();
    expect(sampler.calls).toBe(0);
  });

  it("traceidratio (not parent-based): a traceparent's flag does not decide, the sampler does", () => {
    const { t, sampler } = setup(new TraceIdRatioBasedSampler(1), { root: 1, parentBased: false });
    const s = t.startSampled("p ", "x", { parent: { traceparent: `00-${TRACE}-${PARENT}-00` } });
    expect(sampler.calls).toBe(1);
    expect(s?.isRecording()).toBe(true);
  });

  it("without a hint every decision is the sampler's", () => {
    const { t, sampler } = setup(ratio(0), null);
    expect(t.startSampled("p ", "x")).toBeUndefined();
    expect(t.startSampled("p ", "x", { parent: { traceparent: `00-${TRACE}-${PARENT}-00` } })).toBeUndefined();
    expect(sampler.calls).toBe(2);
  });
});

describe("envSampler (OTEL_TRACES_SAMPLER / _ARG)", () => {
  it.each([
    [undefined, undefined, "ParentBased", { root: 1, parentBased: true }],
    ["always_on", undefined, "AlwaysOnSampler", { root: 1, parentBased: false }],
    ["always_off", "0.5", "AlwaysOffSampler", { root: 0, parentBased: false }],
    ["traceidratio", "0.25", "TraceIdRatioBased{0.25}", { root: 0.25, parentBased: false }],
    ["parentbased_always_on", undefined, "ParentBased", { root: 1, parentBased: true }],
    ["parentbased_always_off", undefined, "ParentBased", { root: 0, parentBased: true }],
    ["parentbased_traceidratio", "0.01", "TraceIdRatioBased{0.01}", { root: 0.01, parentBased: true }],
    ["parentbased_traceidratio", "2", "TraceIdRatioBased{1}", { root: 1, parentBased: true }],
    ["traceidratio", "x", "TraceIdRatioBased{1}", { root: 1, parentBased: false }],
    ["traceidratio", "", "TraceIdRatioBased{1}", { root: 1, parentBased: false }],
  ])("%s %s", (name, arg, sampler, hint) => {
    const r = envSampler(base, name, arg);
    expect(r?.hint).toEqual(hint);
    expect(r?.sampler.toString()).toContain(sampler);
  });

  it("an unknown sampler is left to the SDK", () => {
    expect(envSampler(base, "jaeger_remote", undefined)).toBeUndefined();
  });
});

describe("startTracingSdk with a sampling run", () => {
  it("samples root spans in runs of telemetry.sampling_run", async () => {
    vi.stubEnv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio");
    vi.stubEnv("OTEL_TRACES_SAMPLER_ARG", "0.1");
    const exporter = new InMemorySpanExporter();
    const sdk = await startTracingSdk(
      "n@127.0.0.1",
      { maxDeliverSpans: 10, samplingRun: 4 },
      { spanProcessors: [new SimpleSpanProcessor(exporter)] },
    );
    vi.unstubAllEnvs();
    try {
      // The draw 0.5: floor(ln(0.5) / ln(1 - 0.1)) = 6 roots dropped, then a run of 4 (the clock
      // stands still: all within the run's window), then a gap of floor(ln(0.5) / ln(1 - 0.1/3.7)) = 25.
      vi.spyOn(Math, "random").mockReturnValue(0.5);
      vi.spyOn(performance, "now").mockReturnValue(1000);
      const got = Array.from({ length: 11 }, () => {
        const s = sdk.tracing.startSampled("publish ", "t");
        s?.end();
        return s !== undefined;
      });
      expect(got).toEqual([false, false, false, false, false, false, true, true, true, true, false]);
      expect(exporter.getFinishedSpans()).toHaveLength(4);
    } finally {
      await sdk.shutdown();
    }
  });
});

describe("startTracingSdk with OTEL_TRACES_SAMPLER", () => {
  const exporter = new InMemorySpanExporter();
  let sdk: TracingSdk;
  beforeAll(async () => {
    vi.stubEnv("OTEL_TRACES_SAMPLER", "parentbased_traceidratio");
    vi.stubEnv("OTEL_TRACES_SAMPLER_ARG", "0.1");
    sdk = await startTracingSdk(
      "n@127.0.0.1",
      { maxDeliverSpans: 10, samplingRun: 1 },
      { spanProcessors: [new SimpleSpanProcessor(exporter)] },
    );
    vi.unstubAllEnvs();
  });
  afterAll(async () => {
    await sdk?.shutdown();
  });

  it("draws roots against the ratio and records the ones drawn", () => {
    // The draw 0.5 at 10%: floor(ln(0.5) / ln(0.9)) = 6 roots dropped, then one sampled.
    vi.spyOn(Math, "random").mockReturnValueOnce(0.5);
    for (let i = 0; i < 6; i++) expect(sdk.tracing.startSampled("publish ", "t")).toBeUndefined();
    const s = sdk.tracing.startSampled("publish ", "t");
    expect(s?.isRecording()).toBe(true);
    s?.end();
    expect(exporter.getFinishedSpans().map((x) => x.name)).toEqual(["publish t"]);
  });

  it("other spans keep the configured sampler's ratio", () => {
    let n = 0;
    for (let i = 0; i < 2000; i++) {
      const s = sdk.tracing.start("connect", { parent: null });
      if (s.isRecording()) n++;
      s.end();
    }
    expect(n).toBeGreaterThan(120);
    expect(n).toBeLessThan(280);
  });
});
