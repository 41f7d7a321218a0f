// A small, independent protobuf decoder for the OTLP ExportTraceServiceRequest message (field
// numbers from opentelemetry-proto: collector/trace/v1/trace_service.proto, trace/v1/trace.proto,
// common/v1/common.proto, resource/v1/resource.proto), for tests: it decodes into plain objects
// keeping what was written (a field present with its default value stays present), ids and bytes
// as hex, 64-bit integers as bigint. An unknown field or a wrong wire type throws.

type Scalar = "string" | "bytes" | "bool" | "int64" | "uint32" | "fixed64" | "fixed32" | "double";
interface Field {
  name: string;
  type: Scalar | (() => Schema);
  repeated?: boolean;
}
type Schema = Record<number, Field>;

const KeyValue: Schema = {
  1: { name: "key", type: "string" },
  2: { name: "value", type: () => AnyValue },
};
const AnyValue: Schema = {
  1: { name: "stringValue", type: "string" },
  2: { name: "boolValue", type: "bool" },
  3: { name: "intValue", type: "int64" },
  4: { name: "doubleValue", type: "double" },
  5: { name: "arrayValue", type: () => ({ 1: { name: "values", type: () => AnyValue, repeated: true } }) },
  6: { name: "kvlistValue", type: () => ({ 1: { name: "values", type: () => KeyValue, repeated: true } }) },
  7: { name: "bytesValue", type: "bytes" },
};
const attributes = (n: number): Schema => ({ [n]: { name: "attributes", type: () => KeyValue, repeated: true } });
const Resource: Schema = { ...attributes(1), 2: { name: "droppedAttributesCount", type: "uint32" } };
const Scope: Schema = {
  1: { name: "name", type: "string" },
  2: { name: "version", type: "string" },
  ...attributes(3),
  4: { name: "droppedAttributesCount", type: "uint32" },
};
const Event: Schema = {
  1: { name: "timeUnixNano", type: "fixed64" },
  2: { name: "name", type: "string" },
  ...attributes(3),
  4: { name: "droppedAttributesCount", type: "uint32" },
};
const Link: Schema = {
  1: { name: "traceId", type: "bytes" },
  2: { name: "spanId", type: "bytes" },
  3: { name: "traceState", type: "string" },
  ...attributes(4),
  5: { name: "droppedAttributesCount", type: "uint32" },
  6: { name: "flags", type: "fixed32" },
};
const Span: Schema = {
  1: { name: "traceId", type: "bytes" },
  2: { name: "spanId", type: "bytes" },
  3: { name: "traceState", type: "string" },
  4: { name: "parentSpanId", type: "bytes" },
  5: { name: "name", type: "string" },
  6: { name: "kind", type: "uint32" },
  7: { name: "startTimeUnixNano", type: "fixed64" },
  8: { name: "endTimeUnixNano", type: "fixed64" },
  ...attributes(9),
  10: { name: "droppedAttributesCount", type: "uint32" },
  11: { name: "events", type: () => Event, repeated: true },
  12: { name: "droppedEventsCount", type: "uint32" },
  13: { name: "links", type: () => Link, repeated: true },
  14: { name: "droppedLinksCount", type: "uint32" },
  15: { name: "status", type: () => ({ 2: { name: "message", type: "string" }, 3: { name: "code", type: "uint32" } }) },
  16: { name: "flags", type: "fixed32" },
};
const ScopeSpans: Schema = {
  1: { name: "scope", type: () => Scope },
  2: { name: "spans", type: () => Span, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const ResourceSpans: Schema = {
  1: { name: "resource", type: () => Resource },
  2: { name: "scopeSpans", type: () => ScopeSpans, repeated: true },
  3: { name: "schemaUrl", type: "string" },
};
const Request: Schema = { 1: { name: "resourceSpans", type: () => ResourceSpans, repeated: true } };

const WIRE: Record<Scalar, number> = {
  string: 2,
  bytes: 2,
  bool: 0,
  int64: 0,
  uint32: 0,
  fixed64: 1,
  fixed32: 5,
  double: 1,
};

// biome-ignore lint/suspicious/noExplicitAny: decoded messages are untyped trees
export type Decoded = Record<string, any>;

/** Decodes an ExportTraceServiceRequest. */
export function decodeTraceRequest(bytes: Uint8Array): Decoded {
  return decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), Request);
}

function decode(buf: Buffer, schema: Schema): Decoded {
  const out: Decoded = {};
  let pos = 0;
  const varint = (): bigint => {
    let v = 0n;
    let shift = 0n;
    for (;;) {
      if (pos >= buf.length) throw new Error("truncated varint");
      const b = buf[pos++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
      shift += 7n;
      if (shift > 63n) throw new Error("varint too long");
    }
  };
  while (pos < buf.length) {
    const key = Number(varint());
    const field = schema[key >>> 3];
    if (field === undefined) throw new Error(`unknown field ${key >>> 3}`);
    const wire = key & 7;
    const expected = typeof field.type === "function" ? 2 : WIRE[field.type];
    if (wire !== expected) throw new Error(`field ${field.name}: wire type ${wire}, expected ${expected}`);
    let value: unknown;
    if (wire === 2) {
      const len = Number(varint());
      if (pos + len > buf.length) throw new Error(`field ${field.name}: truncated`);
      const body = buf.subarray(pos, pos + len);
      pos += len;
      if (typeof field.type === "function") value = decode(body, field.type());
      else value = field.type === "string" ? body.toString("utf8") : body.toString("hex");
    } else if (wire === 0) {
      const v = varint();
      value = field.type === "int64" ? BigInt.asIntN(64, v) : field.type === "bool" ? v !== 0n : Number(v);
    } else if (wire === 1) {
      value = field.type === "double" ? buf.readDoubleLE(pos) : buf.readBigUInt64LE(pos);
      pos += 8;
    } else {
      value = buf.readUInt32LE(pos);
      pos += 4;
    }
    if (field.repeated) (out[field.name] ??= []).push(value);
    else out[field.name] = value;
  }
  return out;
}
