// The tracing facade: the only module of src/ (main.ts aside) that touches OpenTelemetry, and it
// touches the API package only (`@opentelemetry/api`), loaded on demand. main.ts loads the API and
// the SDK when `telemetry.tracing = on` and hands each node a Tracing over its tracer; with tracing
// off nothing of OpenTelemetry is loaded and logFields() (the logger's mixin) answers `{}`.
//
// W3C Trace Context travels as text pairs: MQTT 5.0 user properties and the forwarded messages'
// headers (`traceparent`/`tracestate`), HTTP headers for the API. The parsing is done here (not by
// the global propagator) so that several nodes in one process never share propagation state.

import type { Attributes, Context, Link, Span, SpanContext, SpanOptions, Tracer } from "@opentelemetry/api";
import {
  childContext,
  FacadeSpan,
  hrNow,
  newSpanId,
  newTraceId,
  RecordedSpan,
  type SpanRecorder,
} from "./facade-span.ts";
import { RootSampling } from "./root-sampling.ts";
import { SpanGroup } from "./span-group.ts";

export type OtelApi = typeof import("@opentelemetry/api");

/** W3C Trace Context as text: what MQTT user properties, link headers and HTTP headers carry. */
export interface TraceCarrier {
  traceparent: string;
  tracestate?: string;
}

export type { SpanRecorder } from "./facade-span.ts";
export type { SpanGroup } from "./span-group.ts";
export type { Span };

/** `messaging.system` has no registered MQTT value: the custom `mqtt` is used. */
export const MESSAGING_SYSTEM = "mqtt";

let api: OtelApi | null = null;

/** Loads the OpenTelemetry API (main.ts, once tracing is on). */
export async function loadTracingApi(): Promise<OtelApi> {
  api ??= await import("@opentelemetry/api");
  return api;
}

/** Whether the API was loaded (false while tracing is off). */
export function tracingLoaded(): boolean {
  return api !== null;
}

/**
 * The context the innermost Tracing.with() or Tracing.run() made active while its synchronous part
 * runs; undefined outside both. It comes before the async-local context (which only with() sets, and
 * which its asynchronous continuations keep): run() activates a span at the cost of two assignments,
 * where an async-local switch costs microseconds once the code has gone cold (a sampled message
 * among a hundred unsampled ones). Continuations never run inside a synchronous part, so the slot is
 * always restored before they do.
 */
let syncActive: Context | undefined;

/** The active context: the innermost with() or run(), else the async-local one. */
function activeContext(otel: OtelApi): Context {
  return syncActive ?? otel.context.active();
}

/** pino mixin: `trace_id`/`span_id` of the active span, `{}` outside one or with tracing off. */
export function logFields(): Record<string, string> {
  // A fresh object each time: pino writes into what the mixin returns.
  if (api === null) return {};
  const span = api.trace.getSpan(activeContext(api));
  if (span === undefined) return {};
  const sc = span.spanContext();
  if (!api.isSpanContextValid(sc)) return {};
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export type SpanKindName = "internal" | "server" | "client" | "producer" | "consumer";

export interface StartOptions {
  kind?: SpanKindName;
  attributes?: Attributes;
  /** Parent: a carrier (remote parent), a span, or the active context when absent. */
  parent?: TraceCarrier | Span | null;
  /** Spans (as carriers) this one is linked to. */
  links?: TraceCarrier[];
}

/**
 * What the facade knows of the configured sampler, so that the hot path can decide without making a
 * span: `root` is the probability that a root span is sampled (always_on 1, always_off 0,
 * traceidratio its ratio); `parentBased` says that a parent's sampled flag decides for its
 * children (the parentbased_* samplers with their default delegates). `run`: root spans are
 * sampled in runs of at most this many (root-sampling.ts; `telemetry.sampling_run`), 1 when absent.
 */
export interface SamplingHint {
  root: number;
  parentBased: boolean;
  run?: number;
}

/**
 * Context key marking a root span whose sampling the facade already decided (sampled): the SDK's
 * sampler (wrapped in main.ts) records such a span without deciding again. A `Symbol.for` key, as
 * `createContextKey` makes, so that no OpenTelemetry module is needed to name it.
 */
export const PRESAMPLED: symbol = Symbol.for("svc.tracing.presampled");

const NO_ATTRIBUTES: Attributes = Object.freeze({});

/** The description of the API's context key for the active span (trace/context-utils). */
const SPAN_KEY_DESCRIPTION = "OpenTelemetry Context Key SPAN";

/**
 * A context that is `parent` with `span` as its active span: what the API's setSpan() makes, as one
 * small object instead of a copy of the parent's map (Tracing.with, once per traced message).
 * Setting or deleting a value makes the API's own context.
 */
class SpanOverContext implements Context {
  constructor(
    private readonly parent: Context,
    private readonly span: Span,
    private readonly key: symbol,
  ) {}

  getValue(key: symbol): unknown {
    return key === this.key ? this.span : this.parent.getValue(key);
  }

  setValue(key: symbol, value: unknown): Context {
    return this.parent.setValue(this.key, this.span).setValue(key, value);
  }

  deleteValue(key: symbol): Context {
    return this.parent.setValue(this.key, this.span).deleteValue(key);
  }
}

/** One node's tracer with the few operations the broker, the cluster and the API need. */
export class Tracing {
  /** The root context with the PRESAMPLED mark (one object, made once). */
  private readonly presampledRoot: Context;
  /** Span options with only a kind, made once (the SDK does not modify them). */
  private readonly kindOnly: Record<SpanKindName, SpanOptions>;
  /** The API's context key of the active span, once checked; null: contexts made by the API only. */
  private readonly spanKey: symbol | null;
  /** The draws of root spans for a root ratio strictly between 0 and 1, else null. */
  private readonly roots: RootSampling | null;

  constructor(
    private readonly otel: OtelApi,
    private readonly tracer: Tracer,
    /** At most this many `deliver` spans per message (the rest of a fan-out is not traced). */
    readonly maxDeliverSpans: number,
    /** The configured sampler's decisions as the facade can take them; null: always ask the SDK. */
    private readonly sampling: SamplingHint | null = null,
    /** Where the spans the facade makes itself go (recordChild, sampled spans); null: SDK spans. */
    private readonly recorder: SpanRecorder | null = null,
  ) {
    this.presampledRoot = otel.ROOT_CONTEXT.setValue(PRESAMPLED, true);
    const root = sampling?.root ?? 1;
    this.roots = root > 0 && root < 1 ? new RootSampling(root, sampling?.run ?? 1) : null;
    // The API keys the span of a context with Symbol.for(its description) (so that API copies
    // agree); a SpanOverContext is used only once the API was seen to read the span from one.
    const key = otel.createContextKey(SPAN_KEY_DESCRIPTION);
    const probe = otel.trace.wrapSpanContext(otel.INVALID_SPAN_CONTEXT);
    this.spanKey = otel.trace.getSpan(new SpanOverContext(otel.ROOT_CONTEXT, probe, key)) === probe ? key : null;
    const only = (k: SpanKindName): SpanOptions => ({ kind: this.kind(k) });
    this.kindOnly = {
      internal: only("internal"),
      server: only("server"),
      client: only("client"),
      producer: only("producer"),
      consumer: only("consumer"),
    };
  }

  /**
   * Starts the span `name + suffix` unless the sampler drops it: undefined then, and where the
   * sampler allows it nothing was made at all (no span, no ids, no context). Decided here, with the
   * configured sampler's semantics: a root span (no parent carrier, no active span) by one
   * `Math.random()` against the root ratio; with a parent-based sampler, a parent's sampled flag
   * (a carrier's last two hex digits, or the active span's). Anything else asks the SDK's sampler.
   * `parent` is as for start().
   */
  startSampled(name: string, suffix: string, o: StartOptions = {}): Span | undefined {
    const s = this.sampling;
    if (s === null) return this.recording(this.start(name + suffix, o));
    if (!s.parentBased && s.root <= 0) return undefined; // always_off, traceidratio 0
    const p = o.parent;
    const otel = this.otel;
    let parent: SpanContext;
    if (p === null) return this.startRoot(name, suffix, o);
    if (p === undefined) {
      const active = otel.trace.getSpan(activeContext(otel));
      if (active === undefined) return this.startRoot(name, suffix, o);
      if (!s.parentBased) return this.recording(this.start(name + suffix, o));
      parent = active.spanContext();
    } else if ("traceparent" in p) {
      const sc = this.parse(p);
      if (sc === undefined) return this.startRoot(name, suffix, o); // an invalid carrier: a root span
      if (!s.parentBased) return this.recording(this.start(name + suffix, o));
      parent = sc;
    } else {
      if (s.parentBased && (p.spanContext().traceFlags & 1) === 0) return undefined;
      return this.recording(this.start(name + suffix, o));
    }
    if ((parent.traceFlags & 1) === 0) return undefined;
    // A sampled parent under a parent-based sampler: sampled without a draw, as the SDK would.
    return this.sampledSpan(name + suffix, o, parent);
  }

  /**
   * startSampled() for a root span (`o.parent` null; also where startSampled finds no valid parent),
   * the form of a client's PUBLISH without a traceparent: sampled against the root ratio, nothing
   * made when the span is dropped, and a sampled span the SDK is told not to decide again. Each
   * root span is sampled with the ratio's probability, in runs (root-sampling.ts): no
   * Math.random() per span (as much as the rest of an unsampled publish), one per run.
   */
  startRoot(name: string, suffix: string, o: StartOptions): Span | undefined {
    const s = this.sampling;
    if (s === null) return this.recording(this.start(name + suffix, o));
    // Under 1 the draws decide; there are none at 0 (always_off, ratio 0): nothing is sampled.
    if (s.root < 1 && !this.roots?.next()) return undefined;
    return this.sampledSpan(name + suffix, o, undefined);
  }

  /**
   * A span the facade sampled (under `parent`, or a root span): a FacadeSpan when there is a
   * recorder, else the SDK's span (told not to decide again for a root span).
   */
  private sampledSpan(name: string, o: StartOptions, parent: SpanContext | undefined): Span {
    const r = this.recorder;
    if (r === null) {
      const ctx =
        parent === undefined ? this.presampledRoot : this.otel.trace.setSpanContext(this.otel.ROOT_CONTEXT, parent);
      return this.tracer.startSpan(name, this.spanOptions(o), ctx);
    }
    const sc: SpanContext =
      parent === undefined
        ? { traceId: newTraceId(), spanId: newSpanId(), traceFlags: 1, isRemote: false }
        : childContext(parent, newSpanId());
    const links = o.links === undefined ? undefined : this.links(o.links);
    return new FacadeSpan(name, this.kind(o.kind), sc, parent, o.attributes, links, r);
  }

  private recording(span: Span): Span | undefined {
    return span.isRecording() ? span : undefined;
  }

  private spanOptions(o: StartOptions): SpanOptions {
    return {
      kind: this.kind(o.kind),
      attributes: o.attributes,
      links: o.links === undefined ? undefined : this.links(o.links),
    };
  }

  private links(cs: TraceCarrier[]): Link[] {
    const out: Link[] = [];
    for (const c of cs) {
      const context = this.parse(c);
      if (context !== undefined) out.push({ context });
    }
    return out;
  }

  /** Starts a span; `parent: null` starts a root span. */
  start(name: string, o: StartOptions = {}): Span {
    return this.tracer.startSpan(name, this.spanOptions(o), this.parentContext(o.parent));
  }

  /**
   * Records a finished, zero-length child of a sampled `parent` (a span context from contextOf())
   * and answers its span context; undefined when the sampler drops it. Its attributes are `shared`
   * (objects many spans share, such as a message's) and then its `own`. With a recorder and a
   * parent-based sampler (the default) no SDK span is made: the hot-path form for per-subscriber
   * spans.
   */
  recordChild(
    name: string,
    parent: SpanContext,
    kind: SpanKindName,
    shared: readonly Attributes[],
    own: Attributes = NO_ATTRIBUTES,
  ): SpanContext | undefined {
    const r = this.childRecorder;
    if (r !== null) {
      if ((parent.traceFlags & 1) === 0) return undefined;
      const sc = childContext(parent, newSpanId());
      r.record(new RecordedSpan(name, this.kind(kind), sc, parent, hrNow(), shared, own, r.resource, r.scope));
      return sc;
    }
    const ctx = this.otel.trace.setSpanContext(this.otel.ROOT_CONTEXT, parent);
    const span = this.tracer.startSpan(name, this.kindOnly[kind], ctx);
    if (!span.isRecording()) return undefined;
    for (const part of shared) span.setAttributes(part);
    span.setAttributes(own);
    span.end();
    return span.spanContext();
  }

  /**
   * A group for the zero-length children of a sampled `parent` that the caller makes one after
   * another and records together with closeGroup() (a traced message's deliveries while its
   * routing runs): recordChild()'s spans kept as plain data (span-group.ts). Undefined where
   * recordChild() would not use the recorder (no recorder, a sampler that is not parent-based) or
   * when `parent` is not sampled.
   */
  openGroup(
    name: string,
    parent: SpanContext,
    kind: SpanKindName,
    shared: readonly Attributes[],
  ): SpanGroup | undefined {
    const r = this.childRecorder;
    if (r === null || (parent.traceFlags & 1) === 0) return undefined;
    return new SpanGroup(name, this.kind(kind), parent, shared, r.resource, r.scope);
  }

  /** Records the spans added to `group` (none: nothing). */
  closeGroup(group: SpanGroup): void {
    if (group.length > 0) this.recorder?.recordGroup(group);
  }

  /**
   * The recorder of the children of sampled spans, when the facade records them itself (a
   * recorder and a parent-based sampler, the default); null: they are the SDK's spans.
   */
  private get childRecorder(): SpanRecorder | null {
    return this.sampling?.parentBased === true ? this.recorder : null;
  }

  /** The span context of a carrier, undefined when it is invalid. */
  contextOf(c: TraceCarrier): SpanContext | undefined {
    return this.parse(c);
  }

  /** The carrier of a span context (W3C traceparent, and tracestate when there is one). */
  carrierOfContext(sc: SpanContext): TraceCarrier {
    const tp = `00-${sc.traceId}-${sc.spanId}-${(sc.traceFlags & 0xff).toString(16).padStart(2, "0")}`;
    const ts = sc.traceState?.serialize();
    return ts === undefined || ts === "" ? { traceparent: tp } : { traceparent: tp, tracestate: ts };
  }

  /**
   * Sets attributes the caller shares between spans and never modifies (plain keys distinct across
   * the objects, primitive values): a span the facade recorded keeps the objects as they are, any
   * other span copies and checks each attribute.
   */
  setSharedAttributes(span: Span, shared: readonly Record<string, string | number | boolean>[]): void {
    if (span instanceof FacadeSpan && span.shareAttributes(shared)) return;
    for (const part of shared) span.setAttributes(part);
  }

  /**
   * Runs `fn` with `span` active (log lines and child spans see it), its asynchronous continuations
   * included (an API request's handler, an action that awaits).
   */
  with<A extends unknown[], R>(span: Span, fn: (...args: A) => R, ...args: A): R {
    const ctx = this.contextWith(span);
    const outer = syncActive;
    syncActive = ctx;
    try {
      return this.otel.context.with(ctx, fn, undefined, ...args);
    } finally {
      syncActive = outer;
    }
  }

  /**
   * Runs `fn(arg)` with `span` active for its synchronous part only: what it starts asynchronously
   * continues in the context around the call. The form of a traced message's routing and deliveries,
   * which are synchronous (rule actions that await run in with()). `fromRoot`: the span came from
   * outside any caller (a client's PUBLISH, a message from another node), so it is made active over
   * the root context, without looking up the active one (the API's global lookup and the async-local
   * store: microseconds where the code is cold).
   */
  run<A, R>(span: Span, fn: (arg: A) => R, arg: A, fromRoot = false): R {
    const outer = syncActive;
    syncActive = this.contextWith(span, fromRoot ? this.otel.ROOT_CONTEXT : activeContext(this.otel));
    try {
      return fn(arg);
    } finally {
      syncActive = outer;
    }
  }

  /** `active` (by default the active context) with `span` as its active span. */
  private contextWith(span: Span, active = activeContext(this.otel)): Context {
    const key = this.spanKey;
    return key === null ? this.otel.trace.setSpan(active, span) : new SpanOverContext(active, span, key);
  }

  /** Ends `span` with an error status for `err`. */
  fail(span: Span, err: unknown): void {
    if (err instanceof Error) span.recordException(err);
    span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
  }

  /** Marks `span` as failed without an exception (a refused CONNECT, a 5xx). */
  error(span: Span, message: string): void {
    span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message });
  }

  /** The carrier of `span` (W3C traceparent, and tracestate when there is one). */
  carrier(span: Span): TraceCarrier {
    return this.carrierOfContext(span.spanContext());
  }

  /** The carrier read from text pairs (user properties, headers), undefined when none or invalid. */
  carrierOf(get: (key: string) => unknown): TraceCarrier | undefined {
    const tp = first(get("traceparent"));
    if (tp === undefined || !TRACEPARENT.test(tp)) return undefined;
    const ts = first(get("tracestate"));
    return ts === undefined ? { traceparent: tp } : { traceparent: tp, tracestate: ts };
  }

  private parse(c: TraceCarrier): SpanContext | undefined {
    const m = TRACEPARENT.exec(c.traceparent);
    if (m === null || m[1] === "ff") return undefined;
    const sc: SpanContext = {
      traceId: m[2],
      spanId: m[3],
      traceFlags: Number.parseInt(m[4], 16) & 1,
      isRemote: true,
    };
    if (c.tracestate !== undefined && c.tracestate !== "") sc.traceState = this.otel.createTraceState(c.tracestate);
    return this.otel.isSpanContextValid(sc) ? sc : undefined;
  }

  private parentContext(p: TraceCarrier | Span | null | undefined): Context {
    const o = this.otel;
    if (p === undefined) return activeContext(this.otel);
    if (p === null) return o.ROOT_CONTEXT;
    if ("traceparent" in p) {
      const sc = this.parse(p);
      return sc === undefined ? o.ROOT_CONTEXT : o.trace.setSpanContext(o.ROOT_CONTEXT, sc);
    }
    return o.trace.setSpan(o.ROOT_CONTEXT, p);
  }

  private kind(k: SpanKindName | undefined): number {
    const K = this.otel.SpanKind;
    switch (k) {
      case "server":
        return K.SERVER;
      case "client":
        return K.CLIENT;
      case "producer":
        return K.PRODUCER;
      case "consumer":
        return K.CONSUMER;
      default:
        return K.INTERNAL;
    }
  }
}

/** The carrier a traced message holds in its headers (`traceparent`, `tracestate`), if any. */
export function carrierOfHeaders(h: Record<string, unknown> | undefined): TraceCarrier | undefined {
  if (h === undefined || typeof h.traceparent !== "string") return undefined;
  return typeof h.tracestate === "string"
    ? { traceparent: h.traceparent, tracestate: h.tracestate }
    : { traceparent: h.traceparent };
}

function first(v: unknown): string | undefined {
  if (typeof v === "string") return v;
  if (Array.isArray(v) && typeof v[0] === "string") return v[0];
  return undefined;
}
