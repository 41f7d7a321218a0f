// Spans the tracing facade records itself, without the SDK's Span class, for the per-message spans
// of sampled messages (the SDK's span, with its limits, sanitizing and clock, costs several times
// more). Both have the SDK's ReadableSpan shape, so every span processor and exporter takes them as
// any other finished span; they reach the processors through the SpanRecorder main.ts passes.
// - FacadeSpan: a live span (the API's Span interface: attributes, events, status, end), made only
//   where the facade took the sampling decision itself (tracing.ts), e.g. `publish` and `dispatch`.
// - RecordedSpan: a finished span of zero duration (`deliver`, `ack`).
// Both may keep their attributes in parts: objects many spans share (the node's constant
// attributes of an operation, a message's) and the span's own. `attributes` merges them when
// someone reads it; the OTLP encoder reads `attributeParts` and encodes each shared object once
// for the spans that share it.

import { randomFillSync } from "node:crypto";
import type {
  Attributes,
  AttributeValue,
  Exception,
  HrTime,
  Link,
  Span,
  SpanContext,
  SpanStatus,
  TimeInput,
} from "@opentelemetry/api";
import type { SpanGroup } from "./span-group.ts";

/** Where finished facade spans go (main.ts: the provider's span processors, its resource, the scope). */
export interface SpanRecorder {
  readonly resource: unknown;
  readonly scope: { name: string; version?: string };
  record(span: RecordedSpan | FacadeSpan): void;
  /** Records the spans of a group (span-group.ts) at once. */
  recordGroup(group: SpanGroup): void;
}

const NO_EVENTS: readonly never[] = Object.freeze([]);
const STATUS_UNSET: SpanStatus = Object.freeze({ code: 0 });
const ZERO_DURATION: HrTime = Object.freeze([0, 0]) as unknown as HrTime;
/** The SDK's default span limits (attributes per span and per event, events, links). */
const LIMIT = 128;

// ---- ids and time ----

/**
 * Random ids drawn in blocks: 4 KiB of random bytes as one hex string, each id a slice of it (no
 * per-id native call or number formatting). Ids need uniqueness, not secrecy.
 */
const ID_BYTES = Buffer.allocUnsafe(4096);
let idHex = "";
let idOffset = 0;

/** `n` random hex digits: a slice of the block (flat, where a concatenation of two would not be). */
function randomHex(n: number): string {
  if (idOffset + n > idHex.length) {
    idHex = randomFillSync(ID_BYTES).toString("hex");
    idOffset = 0;
  }
  const id = idHex.slice(idOffset, idOffset + n);
  idOffset += n;
  return id;
}

/** A span id: 16 hex digits, never all zeros. */
export function newSpanId(): string {
  for (;;) {
    const id = randomHex(16);
    if (id !== "0000000000000000") return id;
  }
}

/** A trace id: 32 hex digits, never all zeros. */
export function newTraceId(): string {
  for (;;) {
    const id = randomHex(32);
    if (id !== "00000000000000000000000000000000") return id;
  }
}

/** The context of a sampled local child of `parent` with id `spanId` (its trace, its trace state). */
export function childContext(parent: SpanContext, spanId: string): SpanContext {
  const sc: SpanContext = { traceId: parent.traceId, spanId, traceFlags: 1, isRemote: false };
  if (parent.traceState !== undefined) sc.traceState = parent.traceState;
  return sc;
}

const TIME_ORIGIN = performance.timeOrigin;

function hrFromMs(ms: number): HrTime {
  const s = Math.trunc(ms / 1000);
  return [s, Math.min(999_999_999, Math.trunc((ms - s * 1000) * 1e6))];
}

export function hrNow(): HrTime {
  return hrFromMs(TIME_ORIGIN + performance.now());
}

/** A TimeInput as the SDK reads it: HrTime, Date, epoch ms, or ms since the time origin. */
function hrTime(t: TimeInput | undefined): HrTime {
  if (t === undefined) return hrNow();
  if (Array.isArray(t)) return t as HrTime;
  if (t instanceof Date) return hrFromMs(t.getTime());
  return hrFromMs(t < TIME_ORIGIN ? TIME_ORIGIN + t : t);
}

function hrDiff(from: HrTime, to: HrTime): HrTime {
  let s = to[0] - from[0];
  let ns = to[1] - from[1];
  if (ns < 0) {
    s--;
    ns += 1e9;
  }
  return s < 0 ? ZERO_DURATION : [s, ns];
}

// ---- attributes (the SDK's rules: valid keys and values only, at most LIMIT per object) ----

function isAttributeValue(v: unknown): v is AttributeValue {
  const t = typeof v;
  if (t === "string" || t === "number" || t === "boolean") return true;
  if (!Array.isArray(v)) return false;
  let type: string | undefined;
  for (const x of v) {
    if (x == null) continue;
    const xt = typeof x;
    if (xt !== "string" && xt !== "number" && xt !== "boolean") return false;
    if (type === undefined) type = xt;
    else if (xt !== type) return false;
  }
  return true;
}

/**
 * Sets `key` on `into` (holding `count` keys) as the SDK would: invalid keys and values are
 * ignored, a new key beyond the limit is dropped. Returns the new count, -1 when dropped.
 */
function putAttribute(into: Attributes, count: number, key: string, value: unknown): number {
  if (key.length === 0 || !isAttributeValue(value)) return count;
  const known = Object.hasOwn(into, key);
  if (!known && count >= LIMIT) return -1;
  into[key] = Array.isArray(value) ? value.slice() : value;
  return known ? count : count + 1;
}

interface TimedEvent {
  name: string;
  attributes: Attributes;
  time: HrTime;
  droppedAttributesCount: number;
}

// ---- the spans ----

/** The attributes of `parts` merged in order (the SDK's view of a span kept in parts). */
function merged(shared: readonly Attributes[], own: Attributes): Attributes {
  const out: Attributes = {};
  for (const part of shared) Object.assign(out, part);
  return Object.assign(out, own);
}

/** Whether one of `parts` has `key`. */
function holds(parts: readonly Attributes[], key: string): boolean {
  for (const part of parts) if (Object.hasOwn(part, key)) return true;
  return false;
}

/** A live span recorded by the facade (see the file comment). */
export class FacadeSpan implements Span {
  /** The span's own attributes (all of them unless it shares parts: attributeParts). */
  private own: Attributes = {};
  /** Shared attribute objects, then `own`, while the span keeps its attributes in parts. */
  attributeParts: readonly [readonly Attributes[], Attributes] | undefined = undefined;
  events: TimedEvent[] = NO_EVENTS as unknown as TimedEvent[];
  links: Link[] = NO_EVENTS as unknown as Link[];
  status: SpanStatus = STATUS_UNSET;
  readonly startTime: HrTime = hrNow();
  endTime: HrTime = ZERO_DURATION;
  duration: HrTime = ZERO_DURATION;
  ended = false;
  droppedAttributesCount = 0;
  droppedEventsCount = 0;
  droppedLinksCount = 0;
  readonly resource: unknown;
  readonly instrumentationScope: { name: string; version?: string };
  private attributeCount = 0;

  constructor(
    public name: string,
    readonly kind: number,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext | undefined,
    attributes: Attributes | undefined,
    links: Link[] | undefined,
    private readonly recorder: SpanRecorder,
  ) {
    this.resource = recorder.resource;
    this.instrumentationScope = recorder.scope;
    if (attributes !== undefined) this.setAttributes(attributes);
    if (links !== undefined && links.length > 0) this.addLinks(links);
  }

  spanContext(): SpanContext {
    return this.context;
  }

  get attributes(): Attributes {
    const parts = this.attributeParts;
    return parts === undefined ? this.own : merged(parts[0], this.own);
  }

  setAttribute(key: string, value: AttributeValue): this {
    if (this.ended) return this;
    const parts = this.attributeParts;
    if (parts !== undefined && holds(parts[0], key)) {
      // A key of a shared object: the span's attributes become one object of its own.
      this.own = merged(parts[0], this.own);
      this.attributeParts = undefined;
    }
    const n = putAttribute(this.own, this.attributeCount, key, value);
    if (n < 0) this.droppedAttributesCount++;
    else this.attributeCount = n;
    return this;
  }

  setAttributes(attributes: Attributes): this {
    for (const k in attributes) if (Object.hasOwn(attributes, k)) this.setAttribute(k, attributes[k] as AttributeValue);
    return this;
  }

  /**
   * Takes `shared` (objects many spans share, never modified after) as the span's first
   * attributes, without copying or checking them: the caller guarantees plain keys, distinct
   * across the objects, and primitive values. False (nothing done) when the span has attributes
   * already, has ended, or the objects are over the limit.
   */
  shareAttributes(shared: readonly Record<string, string | number | boolean>[]): boolean {
    if (this.ended || this.attributeCount !== 0) return false;
    let n = 0;
    for (const part of shared) for (const _ in part) n++;
    if (n > LIMIT) return false;
    this.attributeParts = [shared, this.own];
    this.attributeCount = n;
    return true;
  }

  addEvent(name: string, attributesOrTime?: Attributes | TimeInput, time?: TimeInput): this {
    if (this.ended) return this;
    let attrs: Attributes | undefined;
    if (attributesOrTime instanceof Date || typeof attributesOrTime === "number" || Array.isArray(attributesOrTime)) {
      time ??= attributesOrTime as TimeInput;
    } else attrs = attributesOrTime;
    if (this.events === (NO_EVENTS as unknown)) this.events = [];
    if (this.events.length >= LIMIT) {
      this.events.shift();
      this.droppedEventsCount++;
    }
    const event: TimedEvent = { name, attributes: {}, time: hrTime(time), droppedAttributesCount: 0 };
    if (attrs !== undefined) {
      let n = 0;
      for (const k in attrs) {
        if (!Object.hasOwn(attrs, k)) continue;
        const after = putAttribute(event.attributes, n, k, attrs[k]);
        if (after < 0) event.droppedAttributesCount++;
        else n = after;
      }
    }
    this.events.push(event);
    return this;
  }

  addLink(link: Link): this {
    if (this.links === (NO_EVENTS as unknown)) this.links = [];
    if (this.links.length >= LIMIT) this.droppedLinksCount++;
    else this.links.push(link);
    return this;
  }

  addLinks(links: Link[]): this {
    for (const l of links) this.addLink(l);
    return this;
  }

  setStatus(status: SpanStatus): this {
    // As the SDK: UNSET changes nothing, OK is final, a message only goes with ERROR.
    if (this.ended || status.code === 0 || this.status.code === 1) return this;
    this.status = status.code === 2 ? { code: 2, message: status.message } : { code: status.code };
    return this;
  }

  updateName(name: string): this {
    if (!this.ended) this.name = name;
    return this;
  }

  end(endTime?: TimeInput): void {
    if (this.ended) return;
    this.ended = true;
    this.endTime = hrTime(endTime);
    this.duration = hrDiff(this.startTime, this.endTime);
    this.recorder.record(this);
  }

  isRecording(): boolean {
    return !this.ended;
  }

  recordException(exception: Exception, time?: TimeInput): void {
    const attrs: Attributes = {};
    if (typeof exception === "string") attrs["exception.message"] = exception;
    else if (exception) {
      if (exception.code) attrs["exception.type"] = exception.code.toString();
      else if (exception.name) attrs["exception.type"] = exception.name;
      if (exception.message) attrs["exception.message"] = exception.message;
      if (exception.stack) attrs["exception.stacktrace"] = exception.stack;
    }
    if (attrs["exception.type"] || attrs["exception.message"]) this.addEvent("exception", attrs, time);
  }
}

/** A finished span of zero duration in the SDK's ReadableSpan shape (see the file comment). */
export class RecordedSpan {
  readonly ended = true;
  readonly droppedAttributesCount = 0;
  readonly droppedEventsCount = 0;
  readonly droppedLinksCount = 0;
  /** The attributes: objects many spans share, then the span's own (keys distinct). */
  readonly attributeParts: readonly [readonly Attributes[], Attributes];
  private merged: Attributes | undefined;

  constructor(
    readonly name: string,
    readonly kind: number,
    private readonly context: SpanContext,
    readonly parentSpanContext: SpanContext,
    readonly startTime: HrTime,
    shared: readonly Attributes[],
    own: Attributes,
    readonly resource: unknown,
    readonly instrumentationScope: { name: string; version?: string },
  ) {
    this.attributeParts = [shared, own];
  }

  spanContext(): SpanContext {
    return this.context;
  }
  get attributes(): Attributes {
    this.merged ??= merged(this.attributeParts[0], this.attributeParts[1]);
    return this.merged;
  }
  get endTime(): HrTime {
    return this.startTime;
  }
  get duration(): HrTime {
    return ZERO_DURATION;
  }
  get status(): SpanStatus {
    return STATUS_UNSET;
  }
  get events(): readonly never[] {
    return NO_EVENTS;
  }
  get links(): readonly never[] {
    return NO_EVENTS;
  }
}
