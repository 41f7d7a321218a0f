// A hand-written protobuf encoder for the OTLP ExportTraceServiceRequest message
// (opentelemetry/proto/collector/trace/v1/trace_service.proto), the body of an http/protobuf
// export. It takes finished spans in the SDK's ReadableSpan shape (SDK spans and the facade's
// RecordedSpan alike) and writes the bytes the SDK's ProtobufTraceSerializer writes, field for
// field and in the same order, only with less work per span:
// - two passes over the spans: the first computes every length-delimited size (messages and
//   strings; sizes the writer can derive from a value are not kept) into one reused Int32Array in
//   pre-order, the second writes into one Buffer of the exact size, reading the sizes back in the
//   same order (no estimate, no shifting, no growing);
// - trace and span ids go from their hex strings straight into the buffer;
// - strings: a byte loop for short ASCII, Buffer's latin1Write / utf8Write otherwise; attribute
//   keys, which repeat in every span, are encoded once (a bounded Map);
// - the Resource and InstrumentationScope messages are encoded once per object (WeakMap), since
//   every batch carries the same ones; attributes many spans share (RecordedSpan's shared part)
//   once per request.
// Spans are grouped (otlp-span.ts) by resource (identity) and then by instrumentation scope as the SDK's
// transformer does (name@version:schemaUrl, so that equal scopes from different objects, such as
// the tracer's and the facade's recorder's, share one ScopeSpans), both in order of first
// appearance. (The SDK's protobuf serializer groups scopes by object; the bytes are the same
// whenever each scope is one object, as with the SDK's own tracers.)
// No OpenTelemetry import: the input types are structural (otlp-span.ts; the SDK's ReadableSpan
// satisfies them), and so is the grouping of a batch.

import {
  type Encoded,
  groupSpans,
  type OtlpAttributes,
  type OtlpEvent,
  type OtlpLink,
  type OtlpResource,
  type OtlpScope,
  type OtlpSpan,
  type ResourceGroup,
} from "./otlp-span.ts";

import {
  delimited,
  encodedKey,
  hexValue,
  INT64_END,
  INT64_MIN,
  idSize,
  numberSize,
  spanFlags,
  utf8Length,
  varint64Size,
} from "./otlp-wire.ts";

export type { OtlpSpan } from "./otlp-span.ts";

// Buffer's native string writers (present on every Buffer, missing from @types/node).
type WritableBuffer = Buffer & {
  latin1Write(s: string, offset: number, length: number): number;
  utf8Write(s: string, offset: number, length: number): number;
};

// Below this length an ASCII string is copied by a loop rather than a native call.
const SHORT_STRING = 32;
const EMPTY = new Uint8Array(0);
const hasOwn = Object.prototype.hasOwnProperty;

// Encoder state, reused across calls (encoding is synchronous and never reentrant): the sizes of
// the first pass (`sizes[0..top)`), the read index of the second pass, the output and its position.
let sizes = new Int32Array(4096);
let top = 0;
let next = 0;
const NO_OUTPUT = Buffer.allocUnsafe(0) as WritableBuffer;
let out = NO_OUTPUT;
let pos = 0;

/** Reserves the next size slot (first pass). */
function slot(): number {
  if (top === sizes.length) {
    const grown = new Int32Array(sizes.length * 2);
    grown.set(sizes);
    sizes = grown;
  }
  return top++;
}

// ---- sizes ----

/** A string field: its UTF-8 length goes to a slot; returns the field's size. */
function sizeString(s: string): number {
  const len = utf8Length(s);
  sizes[slot()] = len;
  return delimited(len);
}

function sizeAttributes(attributes: OtlpAttributes): number {
  let size = 0;
  for (const key in attributes) {
    if (hasOwn.call(attributes, key)) size += delimited(sizeKeyValue(key, attributes[key]));
  }
  return size;
}

/** The content size of a KeyValue. */
function sizeKeyValue(key: string, value: unknown): number {
  return encodedKey(key).length + delimited(sizeAnyValue(value));
}

/**
 * The content size of an AnyValue. Slots: a string's length, an array's or kvlist's content size
 * (before its items'); the writer derives every other size from the value (see anyValueSize).
 */
function sizeAnyValue(value: unknown): number {
  switch (typeof value) {
    case "string":
      return sizeString(value);
    case "boolean":
      return 2;
    case "number":
      return numberSize(value);
    case "object": {
      if (value instanceof Uint8Array) return delimited(value.length);
      if (value === null) return 0;
      const s = slot();
      let n = 0;
      if (Array.isArray(value)) {
        for (const item of value) n += delimited(sizeAnyValue(item));
      } else {
        const obj = value as OtlpAttributes;
        for (const k in obj) if (hasOwn.call(obj, k)) n += delimited(sizeKeyValue(k, obj[k]));
      }
      sizes[s] = n;
      return delimited(n);
    }
  }
  return 0;
}

function sizeEvent(event: OtlpEvent): number {
  const s = slot();
  let size = 9 + sizeString(event.name);
  if (event.attributes) size += sizeAttributes(event.attributes);
  size += 1 + varint64Size(event.droppedAttributesCount || 0);
  sizes[s] = size;
  return size;
}

function sizeLink(link: OtlpLink): number {
  const s = slot();
  const ctx = link.context;
  let size = idSize(ctx.traceId) + idSize(ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) size += sizeString(traceState);
  if (link.attributes) size += sizeAttributes(link.attributes);
  size += 1 + varint64Size(link.droppedAttributesCount || 0) + 5;
  sizes[s] = size;
  return size;
}

function sizeStatus(status: OtlpSpan["status"]): number {
  const s = slot();
  let size = 1 + varint64Size(status.code);
  if (status.message) size += sizeString(status.message);
  sizes[s] = size;
  return size;
}

function sizeSpan(span: OtlpSpan): number {
  const s = slot();
  const ctx = span.spanContext();
  let size = idSize(ctx.traceId) + idSize(ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) size += sizeString(traceState);
  const parentId = span.parentSpanContext?.spanId;
  if (parentId) size += idSize(parentId);
  size += sizeString(span.name);
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) size += 1 + varint64Size(kind);
  size += 18; // start and end times
  const parts = span.attributeParts;
  if (parts !== undefined) size += sharedSize(parts[0]) + sizeAttributes(parts[1]);
  else if (span.attributes) size += sizeAttributes(span.attributes);
  size += 1 + varint64Size(span.droppedAttributesCount || 0);
  for (const event of span.events) size += delimited(sizeEvent(event));
  size += 1 + varint64Size(span.droppedEventsCount || 0);
  for (const link of span.links) size += delimited(sizeLink(link));
  size += 1 + varint64Size(span.droppedLinksCount || 0);
  size += delimited(sizeStatus(span.status));
  size += 6; // flags: two-byte tag, fixed32
  sizes[s] = size;
  return size;
}

// ---- writing ----

function writeVarint(v: number): void {
  while (v > 0x7f) {
    out[pos++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[pos++] = v;
}

/** A varint of any integral number, as the SDK's ProtobufWriter.writeVarint. */
function writeVarint64(value: number): void {
  if (value >= 0 && value <= 0xffffffff) return writeVarint(value >>> 0);
  let low: number;
  let high: number;
  if (value >= 0) {
    low = value >>> 0;
    high = (value / 0x100000000) >>> 0;
  } else {
    const abs = Math.abs(value);
    low = (~(abs >>> 0) + 1) >>> 0;
    high = ~((abs / 0x100000000) >>> 0) >>> 0;
    if (low === 0) high = (high + 1) >>> 0;
  }
  while (high > 0 || low > 0x7f) {
    out[pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  out[pos++] = low;
}

function writeFixed32(v: number): void {
  out[pos] = v;
  out[pos + 1] = v >>> 8;
  out[pos + 2] = v >>> 16;
  out[pos + 3] = v >>> 24;
  pos += 4;
}

/** HrTime [seconds, nanos] as fixed64 nanoseconds, exact over the whole uint64 range (as the SDK). */
function writeTime(time: readonly [number, number]): void {
  const seconds = time[0];
  const fromLow16 = (seconds & 0xffff) * 1e9; // < 2^53
  const fromHigh = ((seconds / 0x10000) >>> 0) * 1e9; // < 2^53, to be shifted left by 16 bits
  const low = (fromLow16 >>> 0) + (((fromHigh & 0xffff) * 0x10000) >>> 0) + time[1];
  writeFixed32(low >>> 0);
  writeFixed32(
    (Math.floor(fromLow16 / 0x100000000) + ((fromHigh / 0x10000) >>> 0) + Math.floor(low / 0x100000000)) >>> 0,
  );
}

/** Tag and length of a length-delimited field whose length is the next slot. */
function writeHeader(tag: number): void {
  out[pos++] = tag;
  writeVarint(sizes[next++]);
}

function writeString(tag: number, s: string): void {
  out[pos++] = tag;
  const len = sizes[next++];
  writeVarint(len);
  if (len !== s.length) out.utf8Write(s, pos, len);
  else if (len < SHORT_STRING) for (let i = 0; i < len; i++) out[pos + i] = s.charCodeAt(i);
  else out.latin1Write(s, pos, len);
  pos += len;
}

// A message's spans share their trace id, and its deliver spans their parent's id: the last of
// each kind is kept decoded.
const lastTrace = { hex: "", bytes: new Uint8Array(16) };
const lastParent = { hex: "", bytes: new Uint8Array(8) };

/** writeId for an id that often repeats from one span to the next (`last`: its kind's cache). */
function writeRepeatedId(tag: number, hex: string, last: { hex: string; bytes: Uint8Array }): void {
  const n = hex.length >>> 1;
  if (hex !== last.hex || n !== last.bytes.length) {
    writeId(tag, hex);
    if (n === last.bytes.length) {
      last.hex = hex;
      const bytes = last.bytes;
      for (let i = 0; i < n; i++) bytes[i] = out[pos - n + i];
    }
    return;
  }
  out[pos++] = tag;
  out[pos++] = n;
  out.set(last.bytes, pos);
  pos += n;
}

function writeId(tag: number, hex: string): void {
  const n = hex.length >>> 1;
  out[pos++] = tag;
  writeVarint(n);
  for (let i = 0; i < n; i++) {
    out[pos++] = (hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1));
  }
}

function writeAttributes(tag: number, attributes: OtlpAttributes): void {
  for (const key in attributes) {
    if (hasOwn.call(attributes, key)) writeKeyValue(tag, key, attributes[key]);
  }
}

function writeKeyValue(tag: number, key: string, value: unknown): void {
  const k = encodedKey(key);
  const size = anyValueSize(value);
  out[pos++] = tag;
  writeVarint(k.length + delimited(size));
  for (let i = 0; i < k.length; i++) out[pos + i] = k[i];
  pos += k.length;
  out[pos++] = 0x12; // KeyValue.value
  writeVarint(size);
  writeAnyValue(value);
}

/** The content size of the AnyValue about to be written: from its slot (left unread) or its value. */
function anyValueSize(value: unknown): number {
  switch (typeof value) {
    case "string":
      return delimited(sizes[next]);
    case "boolean":
      return 2;
    case "number":
      return numberSize(value);
    case "object":
      if (value instanceof Uint8Array) return delimited(value.length);
      return value === null ? 0 : delimited(sizes[next]);
  }
  return 0;
}

function writeAnyValue(value: unknown): void {
  switch (typeof value) {
    case "string":
      writeString(0x0a, value);
      return;
    case "boolean":
      out[pos++] = 0x10;
      out[pos++] = value ? 1 : 0;
      return;
    case "number":
      if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
        out[pos++] = 0x18;
        writeVarint64(value);
      } else {
        out[pos++] = 0x21;
        out.writeDoubleLE(value, pos);
        pos += 8;
      }
      return;
    case "object":
      if (value instanceof Uint8Array) {
        out[pos++] = 0x3a;
        writeVarint(value.length);
        out.set(value, pos);
        pos += value.length;
      } else if (Array.isArray(value)) {
        writeHeader(0x2a); // AnyValue.array_value
        for (const item of value) {
          out[pos++] = 0x0a; // ArrayValue.values
          writeVarint(anyValueSize(item));
          writeAnyValue(item);
        }
      } else if (value !== null) {
        const obj = value as OtlpAttributes;
        writeHeader(0x32); // AnyValue.kvlist_value
        for (const k in obj) if (hasOwn.call(obj, k)) writeKeyValue(0x0a, k, obj[k]);
      }
      return;
  }
}

function writeEvent(event: OtlpEvent): void {
  writeHeader(0x5a);
  out[pos++] = 0x09;
  writeTime(event.time);
  writeString(0x12, event.name);
  if (event.attributes) writeAttributes(0x1a, event.attributes);
  out[pos++] = 0x20;
  writeVarint64(event.droppedAttributesCount || 0);
}

function writeLink(link: OtlpLink): void {
  writeHeader(0x6a);
  const ctx = link.context;
  writeId(0x0a, ctx.traceId);
  writeId(0x12, ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) writeString(0x1a, traceState);
  if (link.attributes) writeAttributes(0x22, link.attributes);
  out[pos++] = 0x28;
  writeVarint64(link.droppedAttributesCount || 0);
  out[pos++] = 0x35;
  writeFixed32(spanFlags(ctx.traceFlags, ctx.isRemote));
}

function writeSpan(span: OtlpSpan): void {
  writeHeader(0x12); // ScopeSpans.spans
  const ctx = span.spanContext();
  writeRepeatedId(0x0a, ctx.traceId, lastTrace);
  writeId(0x12, ctx.spanId);
  const traceState = ctx.traceState?.serialize();
  if (traceState) writeString(0x1a, traceState);
  const parent = span.parentSpanContext;
  if (parent?.spanId) writeRepeatedId(0x22, parent.spanId, lastParent);
  writeString(0x2a, span.name);
  const kind = span.kind == null ? 0 : span.kind + 1;
  if (kind !== 0) {
    out[pos++] = 0x30;
    writeVarint64(kind);
  }
  out[pos++] = 0x39;
  writeTime(span.startTime);
  out[pos++] = 0x41;
  writeTime(span.endTime);
  const parts = span.attributeParts;
  if (parts !== undefined) {
    writeShared(parts[0]);
    writeAttributes(0x4a, parts[1]);
  } else if (span.attributes) writeAttributes(0x4a, span.attributes);
  out[pos++] = 0x50;
  writeVarint64(span.droppedAttributesCount || 0);
  for (const event of span.events) writeEvent(event);
  out[pos++] = 0x60;
  writeVarint64(span.droppedEventsCount || 0);
  for (const link of span.links) writeLink(link);
  out[pos++] = 0x70;
  writeVarint64(span.droppedLinksCount || 0);
  writeHeader(0x7a);
  const status = span.status;
  if (status.message) writeString(0x12, status.message);
  out[pos++] = 0x18;
  writeVarint64(status.code);
  out[pos++] = 0x85; // field 16, fixed32: two-byte tag
  out[pos++] = 0x01;
  writeFixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
}

// ---- resource and scope, encoded once per object ----

const resourceCache = new WeakMap<object, Encoded>();
const scopeCache = new WeakMap<object, Encoded>();

/** Runs a size pass and a write pass over fresh state (only between batches, never inside one). */
function encodeAlone(size: () => number, write: () => void): Uint8Array {
  top = 0;
  next = 0;
  const total = size();
  out = Buffer.allocUnsafe(total) as WritableBuffer;
  pos = 0;
  write();
  return finish(total);
}

/** The output, checked to be exactly what the first pass sized (and no longer held here). */
function finish(total: number): Uint8Array {
  const done = out;
  out = NO_OUTPUT;
  if (pos !== total || next !== top) throw new Error(`OTLP encoding: wrote ${pos} of ${total} bytes`);
  return done;
}

function schemaUrlField(url: string | undefined): Uint8Array {
  return url
    ? encodeAlone(
        () => sizeString(url),
        () => writeString(0x1a, url),
      )
    : EMPTY;
}

/** ResourceSpans.resource (field 1) and ResourceSpans.schema_url (field 3). */
export function encodedResource(resource: OtlpResource): Encoded {
  const cached = resourceCache.get(resource);
  if (cached !== undefined) return cached;
  const attributes = resource.attributes;
  const head = encodeAlone(
    () => {
      const s = slot();
      const size = (attributes ? sizeAttributes(attributes) : 0) + 2;
      sizes[s] = size;
      return delimited(size);
    },
    () => {
      writeHeader(0x0a);
      if (attributes) writeAttributes(0x0a, attributes);
      out[pos++] = 0x10; // dropped_attributes_count: 0
      out[pos++] = 0;
    },
  );
  const encoded = { head, tail: schemaUrlField(resource.schemaUrl) };
  // Attributes still being detected are not final: such a resource is encoded again next time.
  if (!resource.asyncAttributesPending) resourceCache.set(resource, encoded);
  return encoded;
}

/** ScopeSpans.scope (field 1) and ScopeSpans.schema_url (field 3). */
export function encodedScope(scope: OtlpScope): Encoded {
  const cached = scopeCache.get(scope);
  if (cached !== undefined) return cached;
  const head = encodeAlone(
    () => {
      const s = slot();
      let size = sizeString(scope.name);
      if (scope.version) size += sizeString(scope.version);
      if (scope.attributes) size += sizeAttributes(scope.attributes);
      if (scope.droppedAttributesCount) size += 1 + varint64Size(scope.droppedAttributesCount);
      sizes[s] = size;
      return delimited(size);
    },
    () => {
      writeHeader(0x0a);
      writeString(0x0a, scope.name);
      if (scope.version) writeString(0x12, scope.version);
      if (scope.attributes) writeAttributes(0x1a, scope.attributes);
      if (scope.droppedAttributesCount) {
        out[pos++] = 0x20;
        writeVarint64(scope.droppedAttributesCount);
      }
    },
  );
  const encoded = { head, tail: schemaUrlField(scope.schemaUrl) };
  scopeCache.set(scope, encoded);
  return encoded;
}

// ---- grouping and the request ----

function sizeRequest(groups: readonly ResourceGroup[]): number {
  let total = 0;
  for (const rg of groups) {
    const s = slot();
    let size = rg.encoded.head.length + rg.encoded.tail.length;
    for (const sg of rg.scopes) {
      const ss = slot();
      let scopeSize = sg.encoded.head.length + sg.encoded.tail.length;
      for (const span of sg.spans) scopeSize += delimited(sizeSpan(span));
      sizes[ss] = scopeSize;
      size += delimited(scopeSize);
    }
    sizes[s] = size;
    total += delimited(size);
  }
  return total;
}

function writeBytes(bytes: Uint8Array): void {
  out.set(bytes, pos);
  pos += bytes.length;
}

function writeRequest(groups: readonly ResourceGroup[]): void {
  for (const rg of groups) {
    writeHeader(0x0a); // ExportTraceServiceRequest.resource_spans
    writeBytes(rg.encoded.head);
    for (const sg of rg.scopes) {
      writeHeader(0x12); // ResourceSpans.scope_spans
      writeBytes(sg.encoded.head);
      for (const span of sg.spans) writeSpan(span);
      writeBytes(sg.encoded.tail);
    }
    writeBytes(rg.encoded.tail);
  }
}

// ---- attribute parts many spans share, encoded once per request ----

const NO_PARTS = new Map<object, Uint8Array>();
/** The shared attribute parts of the request being encoded: their Span.attributes fields. */
let sharedParts = NO_PARTS;

/** The size of a span's shared attribute parts, as encoded (their Span.attributes fields). */
function sharedSize(shared: readonly OtlpAttributes[]): number {
  let size = 0;
  for (let i = 0; i < shared.length; i++) size += (sharedParts.get(shared[i]) as Uint8Array).length;
  return size;
}

function writeShared(shared: readonly OtlpAttributes[]): void {
  for (let i = 0; i < shared.length; i++) writeBytes(sharedParts.get(shared[i]) as Uint8Array);
}

/** Encodes each distinct shared part of `spans` (before the request's passes: encodeAlone). */
function encodeSharedParts(spans: readonly OtlpSpan[]): Map<object, Uint8Array> {
  const parts = new Map<object, Uint8Array>();
  for (const span of spans) {
    const shared = span.attributeParts?.[0];
    if (shared !== undefined) addSharedParts(parts, shared);
  }
  return parts;
}

/** Encodes the parts of `shared` that `parts` does not hold yet (between encodings: encodeAlone). */
function addSharedParts(parts: Map<object, Uint8Array>, shared: readonly OtlpAttributes[]): void {
  for (let i = 0; i < shared.length; i++) {
    const part = shared[i];
    if (!parts.has(part)) parts.set(part, encodePart(part));
  }
}

/** A shared part's Span.attributes fields (encodeAlone without its two closures: once per message). */
function encodePart(part: OtlpAttributes): Uint8Array {
  top = 0;
  next = 0;
  const total = sizeAttributes(part);
  out = Buffer.allocUnsafe(total) as WritableBuffer;
  pos = 0;
  writeAttributes(0x4a, part);
  return finish(total);
}

// ---- one span at a time (otlp-batch.ts: spans encoded as they end) ----

/** Encoded ScopeSpans.spans fields, one after another: `buf[0..len)` (the buffer is reused). */
export class SpanFields {
  buf: Buffer = NO_OUTPUT;
  len = 0;
}

/**
 * Appends `span` to `into` as a ScopeSpans.spans field, the bytes encodeTraceExportRequest writes
 * for it. A shared attribute part is encoded once into `shared`, which the caller keeps for as long
 * as it batches (the parts of one request).
 */
export function appendSpanField(into: SpanFields, span: OtlpSpan, shared: Map<object, Uint8Array>): void {
  const parts = span.attributeParts;
  sharedParts = shared;
  try {
    const t = parts === undefined ? null : templateOf(span, parts[0]);
    if (parts !== undefined && t === null) addSharedParts(shared, parts[0]);
    top = 0;
    next = 0;
    const start = into.len;
    let content: number;
    let ownPart: OtlpAttributes = {};
    if (t === null) content = sizeSpan(span);
    else {
      // The span's own fields: its id, times and own attributes; the rest is the template's.
      ownPart = (parts as readonly [readonly OtlpAttributes[], OtlpAttributes])[1];
      content =
        t.before.length +
        idSize(span.spanContext().spanId) +
        t.middle.length +
        18 +
        t.sharedBytes.length +
        sizeAttributes(ownPart) +
        t.after.length;
    }
    const end = start + delimited(content);
    if (end > into.buf.length) {
      const grown = Buffer.allocUnsafeSlow(Math.max(end, 2 * into.buf.length, 16384));
      grown.set(into.buf.subarray(0, start));
      into.buf = grown;
    }
    out = into.buf as WritableBuffer;
    pos = start;
    if (t === null) writeSpan(span);
    else {
      out[pos++] = 0x12; // ScopeSpans.spans
      writeVarint(content);
      writeBytes(t.before);
      writeId(0x12, span.spanContext().spanId);
      writeBytes(t.middle);
      out[pos++] = 0x39;
      writeTime(span.startTime);
      out[pos++] = 0x41;
      writeTime(span.endTime);
      writeBytes(t.sharedBytes);
      writeAttributes(0x4a, ownPart);
      writeBytes(t.after);
    }
    if (pos !== end || next !== top) throw new Error(`OTLP encoding: wrote ${pos - start} of ${end - start} bytes`);
    into.len = end;
  } finally {
    out = NO_OUTPUT;
    sharedParts = NO_PARTS;
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
  addSharedParts(sharedParts, shared);
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
          out[pos++] = 0x30;
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
        out[pos++] = 0x50; // dropped_attributes_count 0
        out[pos++] = 0;
        out[pos++] = 0x60; // dropped_events_count 0
        out[pos++] = 0;
        out[pos++] = 0x70; // dropped_links_count 0
        out[pos++] = 0;
        out[pos++] = 0x7a; // status: code 0
        out[pos++] = 2;
        out[pos++] = 0x18;
        out[pos++] = 0;
        out[pos++] = 0x85; // flags: two-byte tag, fixed32
        out[pos++] = 0x01;
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

/** The ExportTraceServiceRequest protobuf message carrying `spans`. */
export function encodeTraceExportRequest(spans: readonly OtlpSpan[]): Uint8Array {
  const groups = groupSpans(spans, encodedResource, encodedScope);
  sharedParts = encodeSharedParts(spans);
  try {
    return encodeAlone(
      () => sizeRequest(groups),
      () => writeRequest(groups),
    );
  } finally {
    sharedParts = NO_PARTS;
  }
}
