// One span at a time (otlp-batch.ts: spans encoded as they end): a span appended as the
// ScopeSpans.spans field encodeTraceExportRequest (otlp-proto.ts) writes for it, and the spans of a
// group (span-group.ts: a traced message's deliver spans) written straight from the group's arrays:
// the fields they share (trace, parent, name, kind, shared attributes, flags) are sized once per
// group and written for its first span; each later span copies the first one's and writes its own
// id, time and own attributes.

import { sizeSpan, writeSpan } from "./otlp-proto.ts";
import type { OtlpSpan } from "./otlp-span.ts";
import { delimited, idSize, spanFlags, utf8Length, varint64Size } from "./otlp-wire.ts";
import {
  addSharedParts,
  frozenPartBytes,
  lastParent,
  lastTrace,
  NO_OUTPUT,
  NO_PARTS,
  type PartBytes,
  sharedSize,
  sizeAttributes,
  type WritableBuffer,
  w,
  writeAttributes,
  writeBytes,
  writeFixed32,
  writeId,
  writeRepeatedId,
  writeShared,
  writeSizedString,
  writeTime,
  writeVarint,
  writeVarint64,
} from "./otlp-writer.ts";
import type { SpanGroup } from "./span-group.ts";

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
    if (parts !== undefined) addSharedParts(shared, parts[0]);
    w.top = 0;
    w.next = 0;
    const start = into.len;
    const end = start + delimited(sizeSpan(span));
    reserve(into, start, end);
    writeSpan(span);
    settle(into, start, end);
  } finally {
    release();
  }
}

/**
 * Appends the spans `from` to `to` (excluded) of `group` to `into`, the bytes appendSpanField
 * writes for each of group.span(i) in turn, without making those span objects.
 */
export function appendGroupFields(
  into: SpanFields,
  group: SpanGroup,
  from: number,
  to: number,
  shared: PartBytes,
): void {
  const { parent, name, ids, times, owns } = group;
  w.sharedParts = shared;
  try {
    addSharedParts(shared, group.shared);
    // Each span's own attributes' bytes when frozen (encoded once per object), found before the
    // passes below.
    const ownsBytes = ownBytesOf;
    ownsBytes.length = 0;
    for (let i = from; i < to; i++) ownsBytes.push(frozenPartBytes(owns[i]));
    w.top = 0;
    w.next = 0;
    const traceState = parent.traceState?.serialize() || "";
    const stateLen = utf8Length(traceState);
    const nameLen = utf8Length(name);
    const kind = group.kind == null ? 0 : group.kind + 1;
    // The size of the fields every span of the group has (all but its id and own attributes).
    const fixed =
      idSize(parent.traceId) +
      (stateLen === 0 ? 0 : delimited(stateLen)) +
      (parent.spanId ? idSize(parent.spanId) : 0) +
      delimited(nameLen) +
      (kind === 0 ? 0 : 1 + varint64Size(kind)) +
      18 + // start and end times
      sharedSize(group.shared) +
      AFTER_ATTRIBUTES;
    // Each span's content size (own attributes not frozen are sized here, their sizes queued).
    const sizes = contentSizes;
    sizes.length = 0;
    const start = into.len;
    let end = start;
    for (let i = from; i < to; i++) {
      const ownBytes = ownsBytes[i - from];
      const size = fixed + idSize(ids[i]) + (ownBytes === null ? sizeAttributes(owns[i]) : ownBytes.length);
      sizes.push(size);
      end += delimited(size);
    }
    reserve(into, start, end);
    const flags = spanFlags(1, parent.isRemote);
    // The first span's fields up to its own attributes (`head` bytes from `first`): every later
    // span's are a copy of them with its own id and time written over.
    let first = -1;
    let head = 0;
    const idAt = idSize(parent.traceId);
    let timeAt = 0;
    for (let i = from; i < to; i++) {
      w.out[w.pos++] = 0x12; // ScopeSpans.spans
      writeVarint(sizes[i - from]);
      const at = w.pos;
      const copy = first >= 0 && ids[i].length === ids[from].length;
      if (copy) {
        w.out.copyWithin(at, first, first + head);
        w.pos = at + idAt;
        writeId(0x12, ids[i]);
        w.pos = at + timeAt;
      } else {
        writeRepeatedId(0x0a, parent.traceId, lastTrace);
        writeId(0x12, ids[i]);
        if (stateLen !== 0) writeSizedString(0x1a, traceState, stateLen);
        if (parent.spanId) writeRepeatedId(0x22, parent.spanId, lastParent);
        writeSizedString(0x2a, name, nameLen);
        if (kind !== 0) {
          w.out[w.pos++] = 0x30;
          writeVarint64(kind);
        }
        if (first < 0) timeAt = w.pos - at;
      }
      w.out[w.pos++] = 0x39;
      writeTime(times[i]);
      w.out[w.pos++] = 0x41;
      writeTime(times[i]);
      if (copy) w.pos = at + head;
      else {
        writeShared(group.shared);
        if (first < 0) {
          first = at;
          head = w.pos - at;
        }
      }
      const ownBytes = ownsBytes[i - from];
      if (ownBytes === null) writeAttributes(0x4a, owns[i]);
      else writeBytes(ownBytes);
      writeAfterAttributes(flags);
    }
    ownsBytes.length = 0; // holds no encoded part past the append
    settle(into, start, end);
  } finally {
    release();
  }
}

/** The size of the fields after a plain span's attributes (writeAfterAttributes). */
const AFTER_ATTRIBUTES = 16;

/** What follows a plain span's attributes: no drops, events or links, the status unset, the flags. */
function writeAfterAttributes(flags: number): void {
  const out = w.out;
  let p = w.pos;
  out[p++] = 0x50; // dropped_attributes_count 0
  out[p++] = 0;
  out[p++] = 0x60; // dropped_events_count 0
  out[p++] = 0;
  out[p++] = 0x70; // dropped_links_count 0
  out[p++] = 0;
  out[p++] = 0x7a; // status: code 0
  out[p++] = 2;
  out[p++] = 0x18;
  out[p++] = 0;
  out[p++] = 0x85; // flags: two-byte tag, fixed32
  out[p++] = 0x01;
  w.pos = p;
  writeFixed32(flags);
}

/** The content sizes of a group's spans being appended, and their own attributes' bytes (reused). */
const contentSizes: number[] = [];
const ownBytesOf: (Uint8Array | null)[] = [];

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
