// One span at a time (otlp-batch.ts: spans encoded as they end): a span appended as the
// ScopeSpans.spans field encodeTraceExportRequest (otlp-proto.ts) writes for it, and the templates
// of runs of spans that differ only in span id, times and own attributes (a traced message's
// deliver spans), so that such a span costs a few copies; a span group (span-group.ts) is such a
// run already, appended from one template.

import { sizeSpan, writeSpan } from "./otlp-proto.ts";
import type { OtlpAttributes, OtlpSpan } from "./otlp-span.ts";
import { delimited, idSize, spanFlags, varint64Size } from "./otlp-wire.ts";
import {
  addSharedParts,
  encodeAlone,
  frozenPartBytes,
  NO_OUTPUT,
  NO_PARTS,
  type PartBytes,
  sharedSize,
  sizeAttributes,
  sizeString,
  type WritableBuffer,
  w,
  writeAttributes,
  writeBytes,
  writeFixed32,
  writeId,
  writeShared,
  writeString,
  writeTime,
  writeVarint,
  writeVarint64,
} from "./otlp-writer.ts";
import type { SpanGroup } from "./span-group.ts";

const NO_ATTRIBUTES: OtlpAttributes = Object.freeze({});

/** Encoded ScopeSpans.spans fields, one after another: `buf[0..len)` (the buffer is reused). */
export class SpanFields {
  buf: Buffer = NO_OUTPUT;
  len = 0;
}

/**
 * Appends `span` to `into` as a ScopeSpans.spans field, the bytes encodeTraceExportRequest writes
 * for it. A shared attribute part is encoded into `shared` unless found there, which the caller
 * keeps for as long as it batches (RecentParts: the parts of the last few spans).
 */
export function appendSpanField(into: SpanFields, span: OtlpSpan, shared: PartBytes): void {
  const parts = span.attributeParts;
  w.sharedParts = shared;
  try {
    const t = parts === undefined ? null : templateOf(span, parts[0]);
    if (parts !== undefined && t === null) addSharedParts(shared, parts[0]);
    // The span's own attributes (with a template): encoded once when the part is frozen.
    const ownPart = t === null ? NO_ATTRIBUTES : (parts as readonly [readonly OtlpAttributes[], OtlpAttributes])[1];
    const ownBytes = t === null ? null : frozenPartBytes(ownPart);
    w.top = 0;
    w.next = 0;
    const start = into.len;
    let content: number;
    if (t === null) content = sizeSpan(span);
    else {
      // The span's own fields: its id, times and own attributes; the rest is the template's.
      content =
        templateSize(t) +
        idSize(span.spanContext().spanId) +
        (ownBytes === null ? sizeAttributes(ownPart) : ownBytes.length);
    }
    const end = start + delimited(content);
    reserve(into, start, end);
    if (t === null) writeSpan(span);
    else writeFromTemplate(t, content, span.spanContext().spanId, span.startTime, span.endTime, ownPart, ownBytes);
    settle(into, start, end);
  } finally {
    release();
  }
}

/**
 * Appends the spans `from` to `to` (excluded) of `group` to `into`, the bytes appendSpanField
 * writes for each of group.span(i) in turn: from the group's template (made once, the group being
 * a run), each span writing only its id, time and own attributes. A group of one span, or under a
 * parent with a trace state (which the template does not write), is appended span by span.
 */
export function appendGroupFields(
  into: SpanFields,
  group: SpanGroup,
  from: number,
  to: number,
  shared: PartBytes,
): void {
  const parent = group.parent;
  if (to - from < 2 || parent.traceState !== undefined) {
    for (let i = from; i < to; i++) appendSpanField(into, group.span(i) as unknown as OtlpSpan, shared);
    return;
  }
  const { ids, times, owns } = group;
  w.sharedParts = shared;
  try {
    let t = template;
    if (t === null || !isRun(t, parent.traceId, 1, parent, group.name, group.kind, group.shared)) {
      t = makeTemplate(parent.traceId, 1, parent, group.name, group.kind, group.shared);
      template = t;
    }
    w.top = 0;
    w.next = 0;
    const fixed = templateSize(t);
    const start = into.len;
    let end = start;
    // Each span's content size and own attributes' bytes, found once (own attributes not frozen
    // are sized once: the sizes are queued).
    const sizes = contentSizes;
    const ownsBytes = ownBytesOf;
    sizes.length = 0;
    ownsBytes.length = 0;
    for (let i = from; i < to; i++) {
      const ownBytes = frozenPartBytes(owns[i]);
      const size = fixed + idSize(ids[i]) + (ownBytes === null ? sizeAttributes(owns[i]) : ownBytes.length);
      sizes.push(size);
      ownsBytes.push(ownBytes);
      end += delimited(size);
    }
    reserve(into, start, end);
    for (let i = from; i < to; i++) {
      const k = i - from;
      writeFromTemplate(t, sizes[k], ids[i], times[i], times[i], owns[i], ownsBytes[k]);
    }
    ownsBytes.length = 0; // holds no encoded part past the append
    settle(into, start, end);
  } finally {
    release();
  }
}

/**
 * Makes room in `into` for `end` bytes (its first `start` kept) and points the writer at it, at
 * `start`.
 */
function reserve(into: SpanFields, start: number, end: number): void {
  if (end > into.buf.length) {
    const grown = Buffer.allocUnsafeSlow(Math.max(end, 2 * into.buf.length, 16384));
    grown.set(into.buf.subarray(0, start));
    into.buf = grown;
  }
  w.out = into.buf as WritableBuffer;
  w.pos = start;
}

/** Ends an append of `into`'s bytes `start` to `end`: all were written, and every size queued was read. */
function settle(into: SpanFields, start: number, end: number): void {
  if (w.pos !== end || w.next !== w.top)
    throw new Error(`OTLP encoding: wrote ${w.pos - start} of ${end - start} bytes`);
  into.len = end;
}

/** The writer lets go of the output and the request's shared parts. */
function release(): void {
  w.out = NO_OUTPUT;
  w.sharedParts = NO_PARTS;
}

/** The bytes of a span's content that its template `t` holds (all but its id and own attributes). */
function templateSize(t: SpanTemplate): number {
  return t.before.length + t.middle.length + 18 + t.sharedBytes.length + t.after.length;
}

/**
 * Writes a ScopeSpans.spans field of `content` bytes from template `t`: the span's id, times and
 * own attributes (`ownBytes` when encoded already) between the template's parts.
 */
function writeFromTemplate(
  t: SpanTemplate,
  content: number,
  spanId: string,
  start: readonly [number, number],
  end: readonly [number, number],
  own: OtlpAttributes,
  ownBytes: Uint8Array | null,
): void {
  w.out[w.pos++] = 0x12; // ScopeSpans.spans
  writeVarint(content);
  writeBytes(t.before);
  writeId(0x12, spanId);
  writeBytes(t.middle);
  w.out[w.pos++] = 0x39;
  writeTime(start);
  w.out[w.pos++] = 0x41;
  writeTime(end);
  writeBytes(t.sharedBytes);
  if (ownBytes === null) writeAttributes(0x4a, own);
  else writeBytes(ownBytes);
  writeBytes(t.after);
}

/** The content sizes of a group's spans being appended, and their own attributes' bytes (reused). */
const contentSizes: number[] = [];
const ownBytesOf: (Uint8Array | null)[] = [];

/** What the spans of a run have in common besides their encoding (a traced message's deliver spans). */
interface RunKey {
  traceId: string;
  traceFlags: number;
  parent: OtlpSpan["parentSpanContext"];
  name: string;
  kind: number;
  shared: readonly OtlpAttributes[];
}

/**
 * The fields a run of spans has in common, encoded (a traced message's deliver spans differ only
 * in span id, times and own attributes): the trace id field before the span id, the parent id,
 * name and kind fields after it, the shared attributes' fields, and everything after the
 * attributes (no events, links or drops, status unset, the flags).
 */
interface SpanTemplate extends Readonly<RunKey> {
  readonly before: Uint8Array;
  readonly middle: Uint8Array;
  readonly sharedBytes: Uint8Array;
  readonly after: Uint8Array;
}

/** The last template made (the spans of one message come one after another). */
let template: SpanTemplate | null = null;
/** The run of the last span that found no template: a template is made for the next span of it. */
const previous: RunKey = { traceId: "", traceFlags: 0, parent: undefined, name: "", kind: 0, shared: [] };

/** Whether `span` (with `shared`) is of the run `r`. */
function sameRun(r: Readonly<RunKey>, span: OtlpSpan, shared: readonly OtlpAttributes[]): boolean {
  const ctx = span.spanContext();
  return isRun(r, ctx.traceId, ctx.traceFlags, span.parentSpanContext, span.name, span.kind, shared);
}

/** Whether spans of these trace, flags, parent, name, kind and shared attributes are of the run `r`. */
function isRun(
  r: Readonly<RunKey>,
  traceId: string,
  traceFlags: number,
  parent: OtlpSpan["parentSpanContext"],
  name: string,
  kind: number,
  shared: readonly OtlpAttributes[],
): boolean {
  return (
    r.shared === shared &&
    r.parent === parent &&
    r.name === name &&
    r.kind === kind &&
    r.traceId === traceId &&
    r.traceFlags === traceFlags
  );
}

/**
 * The template of `span` when its shape allows one (shared attributes, no trace state, events,
 * links, drops or status) and it is at least the second span of its run: for the first, a
 * template would cost more than it saves (a message with one delivery). Made between encodings
 * (encodeAlone), its shared attributes encoded into the request's parts, kept for the spans that
 * follow.
 */
function templateOf(span: OtlpSpan, shared: readonly OtlpAttributes[]): SpanTemplate | null {
  const ctx = span.spanContext();
  if (ctx.traceState !== undefined || span.events.length > 0 || span.links.length > 0 || !plain(span)) return null;
  const t = template;
  if (t !== null && sameRun(t, span, shared)) return t;
  if (!sameRun(previous, span, shared)) {
    previous.traceId = ctx.traceId;
    previous.traceFlags = ctx.traceFlags;
    previous.parent = span.parentSpanContext;
    previous.name = span.name;
    previous.kind = span.kind;
    previous.shared = shared;
    return null;
  }
  const made = makeTemplate(ctx.traceId, ctx.traceFlags, span.parentSpanContext, span.name, span.kind, shared);
  template = made;
  return made;
}

/**
 * The template of spans of trace `traceId` with `traceFlags`, under `parent`, named `name`, of
 * `spanKind`, sharing the attributes `shared` (encoded into the request's parts, w.sharedParts).
 * Made between encodings (encodeAlone).
 */
function makeTemplate(
  traceId: string,
  traceFlags: number,
  parent: OtlpSpan["parentSpanContext"],
  name: string,
  spanKind: number,
  shared: readonly OtlpAttributes[],
): SpanTemplate {
  const kind = spanKind == null ? 0 : spanKind + 1;
  const parentId = parent?.spanId;
  addSharedParts(w.sharedParts, shared);
  return {
    traceId,
    traceFlags,
    parent,
    name,
    kind: spanKind,
    shared,
    before: encodeAlone(
      () => idSize(traceId),
      () => writeId(0x0a, traceId),
    ),
    middle: encodeAlone(
      () => (parentId ? idSize(parentId) : 0) + sizeString(name) + (kind === 0 ? 0 : 1 + varint64Size(kind)),
      () => {
        if (parentId) writeId(0x22, parentId);
        writeString(0x2a, name);
        if (kind !== 0) {
          w.out[w.pos++] = 0x30;
          writeVarint64(kind);
        }
      },
    ),
    sharedBytes: encodeAlone(
      () => sharedSize(shared),
      () => writeShared(shared),
    ),
    after: encodeAlone(
      () => 16,
      () => {
        w.out[w.pos++] = 0x50; // dropped_attributes_count 0
        w.out[w.pos++] = 0;
        w.out[w.pos++] = 0x60; // dropped_events_count 0
        w.out[w.pos++] = 0;
        w.out[w.pos++] = 0x70; // dropped_links_count 0
        w.out[w.pos++] = 0;
        w.out[w.pos++] = 0x7a; // status: code 0
        w.out[w.pos++] = 2;
        w.out[w.pos++] = 0x18;
        w.out[w.pos++] = 0;
        w.out[w.pos++] = 0x85; // flags: two-byte tag, fixed32
        w.out[w.pos++] = 0x01;
        writeFixed32(spanFlags(traceFlags, parent?.isRemote));
      },
    ),
  };
}

/** No dropped attributes, events or links, and the status unset. */
function plain(span: OtlpSpan): boolean {
  const status = span.status;
  return (
    !span.droppedAttributesCount &&
    !span.droppedEventsCount &&
    !span.droppedLinksCount &&
    status.code === 0 &&
    !status.message
  );
}
