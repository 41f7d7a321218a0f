// A hand-written protobuf encoder for the OTLP ExportTraceServiceRequest message
// (opentelemetry/proto/collector/trace/v1/trace_service.proto), the body of an http/protobuf
// export. It takes finished spans in the SDK's ReadableSpan shape (SDK spans and the facade's
// RecordedSpan alike) and writes the bytes the SDK's ProtobufTraceSerializer writes, field for
// field and in the same order, only with less work per span:
// - two passes over the spans: the first computes every length-delimited size into the slots of
//   otlp-writer.ts, the second writes into one Buffer of the exact size, reading the sizes back in
//   the same order (no estimate, no shifting, no growing);
// - the Resource and InstrumentationScope messages are encoded once per object (WeakMap), since
//   every batch carries the same ones; attribute parts many spans share once per request (a
//   batch encoded span by span: once per run of spans, otlp-writer.ts RecentParts).
// This module holds spans (events, links, status) and the request; otlp-writer.ts the state and
// field writers; otlp-append.ts the encoding of one span at a time (spans encoded as they end).
// Spans are grouped (otlp-span.ts) by resource (identity) and then by instrumentation scope as the
// SDK's transformer does (name@version:schemaUrl, so that equal scopes from different objects,
// such as the tracer's and the facade's recorder's, share one ScopeSpans), both in order of first
// appearance. (The SDK's protobuf serializer groups scopes by object; the bytes are the same
// whenever each scope is one object, as with the SDK's own tracers.)
// No OpenTelemetry import: the input types are structural (otlp-span.ts; the SDK's ReadableSpan
// satisfies them), and so is the grouping of a batch.

import {
  type Encoded,
  groupSpans,
  type OtlpEvent,
  type OtlpLink,
  type OtlpResource,
  type OtlpScope,
  type OtlpSpan,
  type ResourceGroup,
} from "./otlp-span.ts";
import { delimited, idSize, spanFlags, varint64Size } from "./otlp-wire.ts";
import {
  EMPTY,
  encodeAlone,
  encodeSharedParts,
  lastParent,
  lastTrace,
  NO_PARTS,
  sharedSize,
  sizeAttributes,
  sizeString,
  slot,
  w,
  writeAttributes,
  writeBytes,
  writeFixed32,
  writeHeader,
  writeId,
  writeRepeatedId,
  writeShared,
  writeString,
  writeTime,
  writeVarint64,
} from "./otlp-writer.ts";

export type { OtlpSpan } from "./otlp-span.ts";

function sizeEvent(event: OtlpEvent): number {
  const s = slot();
  let size = 9 + sizeString(event.name);
  if (event.attributes) size += sizeAttributes(event.attributes);
  size += 1 + varint64Size(event.droppedAttributesCount || 0);
  w.sizes[s] = size;
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
  w.sizes[s] = size;
  return size;
}

function sizeStatus(status: OtlpSpan["status"]): number {
  const s = slot();
  let size = 1 + varint64Size(status.code);
  if (status.message) size += sizeString(status.message);
  w.sizes[s] = size;
  return size;
}

export function sizeSpan(span: OtlpSpan): number {
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
  w.sizes[s] = size;
  return size;
}

function writeEvent(event: OtlpEvent): void {
  writeHeader(0x5a);
  w.out[w.pos++] = 0x09;
  writeTime(event.time);
  writeString(0x12, event.name);
  if (event.attributes) writeAttributes(0x1a, event.attributes);
  w.out[w.pos++] = 0x20;
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
  w.out[w.pos++] = 0x28;
  writeVarint64(link.droppedAttributesCount || 0);
  w.out[w.pos++] = 0x35;
  writeFixed32(spanFlags(ctx.traceFlags, ctx.isRemote));
}

export function writeSpan(span: OtlpSpan): void {
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
    w.out[w.pos++] = 0x30;
    writeVarint64(kind);
  }
  w.out[w.pos++] = 0x39;
  writeTime(span.startTime);
  w.out[w.pos++] = 0x41;
  writeTime(span.endTime);
  const parts = span.attributeParts;
  if (parts !== undefined) {
    writeShared(parts[0]);
    writeAttributes(0x4a, parts[1]);
  } else if (span.attributes) writeAttributes(0x4a, span.attributes);
  w.out[w.pos++] = 0x50;
  writeVarint64(span.droppedAttributesCount || 0);
  for (const event of span.events) writeEvent(event);
  w.out[w.pos++] = 0x60;
  writeVarint64(span.droppedEventsCount || 0);
  for (const link of span.links) writeLink(link);
  w.out[w.pos++] = 0x70;
  writeVarint64(span.droppedLinksCount || 0);
  writeHeader(0x7a);
  const status = span.status;
  if (status.message) writeString(0x12, status.message);
  w.out[w.pos++] = 0x18;
  writeVarint64(status.code);
  w.out[w.pos++] = 0x85; // field 16, fixed32: two-byte tag
  w.out[w.pos++] = 0x01;
  writeFixed32(spanFlags(ctx.traceFlags, parent?.isRemote));
}

// ---- resource and scope, encoded once per object ----

const resourceCache = new WeakMap<object, Encoded>();
const scopeCache = new WeakMap<object, Encoded>();

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
      w.sizes[s] = size;
      return delimited(size);
    },
    () => {
      writeHeader(0x0a);
      if (attributes) writeAttributes(0x0a, attributes);
      w.out[w.pos++] = 0x10; // dropped_attributes_count: 0
      w.out[w.pos++] = 0;
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
      w.sizes[s] = size;
      return delimited(size);
    },
    () => {
      writeHeader(0x0a);
      writeString(0x0a, scope.name);
      if (scope.version) writeString(0x12, scope.version);
      if (scope.attributes) writeAttributes(0x1a, scope.attributes);
      if (scope.droppedAttributesCount) {
        w.out[w.pos++] = 0x20;
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
      w.sizes[ss] = scopeSize;
      size += delimited(scopeSize);
    }
    w.sizes[s] = size;
    total += delimited(size);
  }
  return total;
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

/** The ExportTraceServiceRequest protobuf message carrying `spans`. */
export function encodeTraceExportRequest(spans: readonly OtlpSpan[]): Uint8Array {
  const groups = groupSpans(spans, encodedResource, encodedScope);
  w.sharedParts = encodeSharedParts(spans);
  try {
    return encodeAlone(
      () => sizeRequest(groups),
      () => writeRequest(groups),
    );
  } finally {
    w.sharedParts = NO_PARTS;
  }
}
