// One span at a time (otlp-batch.ts: spans encoded as they end): a span appended as the
// ScopeSpans.spans field encodeTraceExportRequest (otlp-proto.ts) writes for it, and the templates
// of runs of spans that differ only in span id, times and own attributes (a traced message's
// deliver spans), so that such a span costs a few copies.

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
        t.before.length +
        idSize(span.spanContext().spanId) +
        t.middle.length +
        18 +
        t.sharedBytes.length +
        (ownBytes === null ? sizeAttributes(ownPart) : ownBytes.length) +
        t.after.length;
    }
    const end = start + delimited(content);
    if (end > into.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(end, 2 * into.buf.length, 16384));
      grown.set(into.buf.subarray(0, start));
      into.buf = grown;
    }
    w.out = into.buf as WritableBuffer;
    w.pos = start;
    if (t === null) writeSpan(span);
    else {
      w.out[w.pos++] = 0x12; // ScopeSpans.spans
      writeVarint(content);
      writeBytes(t.before);
      writeId(0x12, span.spanContext().spanId);
      writeBytes(t.middle);
      w.out[w.pos++] = 0x39;
      writeTime(span.startTime);
      w.out[w.pos++] = 0x41;
      writeTime(span.endTime);
      writeBytes(t.sharedBytes);
      if (ownBytes === null) writeAttributes(0x4a, ownPart);
      else writeBytes(ownBytes);
      writeBytes(t.after);
    }
    if (w.pos !== end || w.next !== w.top)
      throw new Error(`OTLP encoding: wrote ${w.pos - start} of ${end - start} bytes`);
    into.len = end;
  } finally {
    w.out = NO_OUTPUT;
    w.sharedParts = NO_PARTS;
  }
}

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
  return (
    r.shared === shared &&
    r.parent === span.parentSpanContext &&
    r.name === span.name &&
    r.kind === span.kind &&
    r.traceId === ctx.traceId &&
    r.traceFlags === ctx.traceFlags
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
  const parent = span.parentSpanContext;
  const kind = span.kind == null ? 0 : span.kind + 1;
  const parentId = parent?.spanId;
  addSharedParts(w.sharedParts, shared);
  const made: SpanTemplate = {
    traceId: ctx.traceId,
    traceFlags: ctx.traceFlags,
    parent,
    name: span.name,
    kind: span.kind,
    shared,
    before: encodeAlone(
      () => idSize(ctx.traceId),
      () => writeId(0x0a, ctx.traceId),
    ),
    middle: encodeAlone(
      () => (parentId ? idSize(parentId) : 0) + sizeString(span.name) + (kind === 0 ? 0 : 1 + varint64Size(kind)),
      () => {
        if (parentId) writeId(0x22, parentId);
        writeString(0x2a, span.name);
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
        writeFixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
      },
    ),
  };
  template = made;
  return made;
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
