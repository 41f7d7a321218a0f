// The protobuf writing of the OTLP encoder (otlp-proto.ts: spans and requests; otlp-append.ts:
// one span at a time): the encoder's state, the sizing pass's slots, the field writers (varints,
// fixed and time fields, strings, ids, attributes and their AnyValues), the two passes over fresh
// state (encodeAlone), and the attribute parts many spans share, encoded once for the spans that
// share them (per request, or per run of spans: RecentParts).
// - sizes: the first pass computes every length-delimited size (messages and strings; sizes the
//   writer can derive from a value are not kept) into one reused Int32Array in pre-order; the
//   second reads them back in the same order;
// - strings: a byte loop for short ASCII, Buffer's latin1Write / utf8Write otherwise; attribute
//   keys, which repeat in every span, are encoded once (a bounded Map);
// - trace and span ids go from their hex strings straight into the buffer.

import type { OtlpAttributes, OtlpSpan } from "./otlp-span.ts";
import { delimited, encodedKey, hexValue, INT64_END, INT64_MIN, numberSize, utf8Length } from "./otlp-wire.ts";

// Buffer's native string writers (present on every Buffer, missing from @types/node).
export type WritableBuffer = Buffer & {
  latin1Write(s: string, offset: number, length: number): number;
  utf8Write(s: string, offset: number, length: number): number;
};

// Below this length an ASCII string is copied by a loop rather than a native call.
const SHORT_STRING = 32;
export const EMPTY = new Uint8Array(0);
const hasOwn = Object.prototype.hasOwnProperty;

export const NO_OUTPUT = Buffer.allocUnsafe(0) as WritableBuffer;
/** Encoded shared attribute parts by object (a Map, or RecentParts). */
export interface PartBytes {
  get(part: object): Uint8Array | undefined;
  has(part: object): boolean;
  set(part: object, bytes: Uint8Array): unknown;
}

export const NO_PARTS: PartBytes = new Map<object, Uint8Array>();

/**
 * The encoder's state, reused across calls and shared by the modules that write spans (encoding is
 * synchronous and never reentrant): the sizes of the first pass (`sizes[0..top)`), the read index
 * of the second pass (`next`), the output and its position, and the shared attribute parts of the
 * request being encoded (their Span.attributes fields).
 */
export const w = {
  sizes: new Int32Array(4096) as Int32Array,
  top: 0,
  next: 0,
  out: NO_OUTPUT,
  pos: 0,
  sharedParts: NO_PARTS,
};

/** Reserves the next size slot (first pass). */
export function slot(): number {
  if (w.top === w.sizes.length) {
    const grown = new Int32Array(w.sizes.length * 2);
    grown.set(w.sizes);
    w.sizes = grown;
  }
  return w.top++;
}

// ---- sizes ----

/** A string field: its UTF-8 length goes to a slot; returns the field's size. */
export function sizeString(s: string): number {
  const len = utf8Length(s);
  w.sizes[slot()] = len;
  return delimited(len);
}

export function sizeAttributes(attributes: OtlpAttributes): number {
  let size = 0;
  for (const key in attributes) {
    if (hasOwn.call(attributes, key)) size += delimited(sizeKeyValue(key, attributes[key]));
  }
  return size;
}

/** The content size of a KeyValue. */
export function sizeKeyValue(key: string, value: unknown): number {
  return encodedKey(key).length + delimited(sizeAnyValue(value));
}

/**
 * The content size of an AnyValue. Slots: a string's length, an array's or kvlist's content size
 * (before its items'); the writer derives every other size from the value (see anyValueSize).
 */
export function sizeAnyValue(value: unknown): number {
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
      w.sizes[s] = n;
      return delimited(n);
    }
  }
  return 0;
}

// ---- writing ----

export function writeVarint(v: number): void {
  w.pos = putVarint(w.out, w.pos, v);
}

/** Writes varint `v` into `out` at `p`; answers the position after it. */
function putVarint(out: Uint8Array, p: number, v: number): number {
  while (v > 0x7f) {
    out[p++] = (v & 0x7f) | 0x80;
    v >>>= 7;
  }
  out[p++] = v;
  return p;
}

/** A varint of any integral number, as the SDK's ProtobufWriter.writeVarint. */
export function writeVarint64(value: number): void {
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
    w.out[w.pos++] = (low & 0x7f) | 0x80;
    low = ((low >>> 7) | (high << 25)) >>> 0;
    high >>>= 7;
  }
  w.out[w.pos++] = low;
}

export function writeFixed32(v: number): void {
  w.out[w.pos] = v;
  w.out[w.pos + 1] = v >>> 8;
  w.out[w.pos + 2] = v >>> 16;
  w.out[w.pos + 3] = v >>> 24;
  w.pos += 4;
}

/** HrTime [seconds, nanos] as fixed64 nanoseconds, exact over the whole uint64 range (as the SDK). */
export function writeTime(time: readonly [number, number]): void {
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
export function writeHeader(tag: number): void {
  w.out[w.pos++] = tag;
  writeVarint(w.sizes[w.next++]);
}

export function writeString(tag: number, s: string): void {
  writeSizedString(tag, s, w.sizes[w.next++]);
}

/** A string field whose UTF-8 length `len` the caller knows (no slot). */
export function writeSizedString(tag: number, s: string, len: number): void {
  const out = w.out;
  let p = w.pos;
  out[p++] = tag;
  p = putVarint(out, p, len);
  if (len !== s.length) out.utf8Write(s, p, len);
  else if (len < SHORT_STRING) for (let i = 0; i < len; i++) out[p + i] = s.charCodeAt(i);
  else out.latin1Write(s, p, len);
  w.pos = p + len;
}

// A message's spans share their trace id, and its deliver spans their parent's id: the last of
// each kind is kept decoded.
export const lastTrace = { hex: "", bytes: new Uint8Array(16) };
export const lastParent = { hex: "", bytes: new Uint8Array(8) };

/** writeId for an id that often repeats from one span to the next (`last`: its kind's cache). */
export function writeRepeatedId(tag: number, hex: string, last: { hex: string; bytes: Uint8Array }): void {
  const n = hex.length >>> 1;
  if (hex !== last.hex || n !== last.bytes.length) {
    writeId(tag, hex);
    if (n === last.bytes.length) {
      last.hex = hex;
      const bytes = last.bytes;
      for (let i = 0; i < n; i++) bytes[i] = w.out[w.pos - n + i];
    }
    return;
  }
  w.out[w.pos++] = tag;
  w.out[w.pos++] = n;
  w.out.set(last.bytes, w.pos);
  w.pos += n;
}

export function writeId(tag: number, hex: string): void {
  const n = hex.length >>> 1;
  const out = w.out;
  let p = w.pos;
  out[p++] = tag;
  p = putVarint(out, p, n);
  for (let i = 0; i < n; i++) {
    out[p++] = (hexValue(hex.charCodeAt(2 * i)) << 4) | hexValue(hex.charCodeAt(2 * i + 1));
  }
  w.pos = p;
}

export function writeAttributes(tag: number, attributes: OtlpAttributes): void {
  for (const key in attributes) {
    if (hasOwn.call(attributes, key)) writeKeyValue(tag, key, attributes[key]);
  }
}

export function writeKeyValue(tag: number, key: string, value: unknown): void {
  const k = encodedKey(key);
  const size = anyValueSize(value);
  const out = w.out;
  let p = w.pos;
  out[p++] = tag;
  p = putVarint(out, p, k.length + delimited(size));
  for (let i = 0; i < k.length; i++) out[p + i] = k[i];
  p += k.length;
  out[p++] = 0x12; // KeyValue.value
  w.pos = putVarint(out, p, size);
  writeAnyValue(value);
}

/** The content size of the AnyValue about to be written: from its slot (left unread) or its value. */
export function anyValueSize(value: unknown): number {
  switch (typeof value) {
    case "string":
      return delimited(w.sizes[w.next]);
    case "boolean":
      return 2;
    case "number":
      return numberSize(value);
    case "object":
      if (value instanceof Uint8Array) return delimited(value.length);
      return value === null ? 0 : delimited(w.sizes[w.next]);
  }
  return 0;
}

export function writeAnyValue(value: unknown): void {
  switch (typeof value) {
    case "string":
      writeString(0x0a, value);
      return;
    case "boolean":
      w.out[w.pos++] = 0x10;
      w.out[w.pos++] = value ? 1 : 0;
      return;
    case "number":
      if (Number.isInteger(value) && value >= INT64_MIN && value < INT64_END) {
        w.out[w.pos++] = 0x18;
        writeVarint64(value);
      } else {
        w.out[w.pos++] = 0x21;
        w.out.writeDoubleLE(value, w.pos);
        w.pos += 8;
      }
      return;
    case "object":
      if (value instanceof Uint8Array) {
        w.out[w.pos++] = 0x3a;
        writeVarint(value.length);
        w.out.set(value, w.pos);
        w.pos += value.length;
      } else if (Array.isArray(value)) {
        writeHeader(0x2a); // AnyValue.array_value
        for (const item of value) {
          w.out[w.pos++] = 0x0a; // ArrayValue.values
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

/**
 * Runs a size pass and a write pass over `x` on fresh state (only between encodings, never inside
 * one). Passes that need no closure take their input as `x` (a shared part: once per message).
 */
export function encodeAlone<T>(size: (x: T) => number, write: (x: T) => void, x?: T): Uint8Array {
  w.top = 0;
  w.next = 0;
  const total = size(x as T);
  w.out = Buffer.allocUnsafe(total) as WritableBuffer;
  w.pos = 0;
  write(x as T);
  return finish(total);
}

/** The output, checked to be exactly what the first pass sized (and no longer held here). */
export function finish(total: number): Uint8Array {
  const done = w.out;
  w.out = NO_OUTPUT;
  if (w.pos !== total || w.next !== w.top) throw new Error(`OTLP encoding: wrote ${w.pos} of ${total} bytes`);
  return done;
}

export function writeBytes(bytes: Uint8Array): void {
  w.out.set(bytes, w.pos);
  w.pos += bytes.length;
}

// ---- attribute parts many spans share, encoded once for them ----

/** The size of a span's shared attribute parts, as encoded (their Span.attributes fields). */
export function sharedSize(shared: readonly OtlpAttributes[]): number {
  let size = 0;
  for (let i = 0; i < shared.length; i++) size += (w.sharedParts.get(shared[i]) as Uint8Array).length;
  return size;
}

export function writeShared(shared: readonly OtlpAttributes[]): void {
  for (let i = 0; i < shared.length; i++) writeBytes(w.sharedParts.get(shared[i]) as Uint8Array);
}

/** Encodes each distinct shared part of `spans` (before the request's passes: encodeAlone). */
export function encodeSharedParts(spans: readonly OtlpSpan[]): Map<object, Uint8Array> {
  const parts = new Map<object, Uint8Array>();
  for (const span of spans) {
    const shared = span.attributeParts?.[0];
    if (shared !== undefined) addSharedParts(parts, shared);
  }
  return parts;
}

/**
 * The encoded parts of the last few objects, for spans encoded one at a time (otlp-append.ts): a
 * message's spans end one after another, so its parts are found here while it has spans to encode,
 * and neither the objects nor their bytes are kept any longer (a Map for a whole batch kept every
 * traced message's object until the batch was exported, long enough to survive into the old
 * generation). The bytes are the same whenever a part is encoded again.
 */
export class RecentParts implements PartBytes {
  /** Most parts one span may share (more and the span cannot be encoded). */
  static readonly MAX = 16;
  private readonly parts: (object | null)[] = new Array(RecentParts.MAX).fill(null);
  private readonly bytes: Uint8Array[] = new Array(RecentParts.MAX).fill(EMPTY);
  /** When each entry was last used (has() or set()), on a counter: the least recent is replaced. */
  private readonly used = new Float64Array(RecentParts.MAX);
  private clock = 0;

  get(part: object): Uint8Array | undefined {
    const i = this.parts.indexOf(part);
    return i < 0 ? undefined : this.bytes[i];
  }

  /** Whether `part` is held; a part found counts as used, so the parts of one span stay. */
  has(part: object): boolean {
    const i = this.parts.indexOf(part);
    if (i < 0) return false;
    this.used[i] = ++this.clock;
    return true;
  }

  /** Holds `part`'s bytes, in place of the least recently used part (no entry moves). */
  set(part: object, bytes: Uint8Array): void {
    let i = this.parts.indexOf(part);
    if (i < 0) {
      const used = this.used;
      i = 0;
      for (let j = 1; j < used.length; j++) if (used[j] < used[i]) i = j;
      this.parts[i] = part;
    }
    this.bytes[i] = bytes;
    this.used[i] = ++this.clock;
  }
}

/** Encodes the parts of `shared` that `parts` does not hold yet (between encodings: encodeAlone). */
export function addSharedParts(parts: PartBytes, shared: readonly OtlpAttributes[]): void {
  if (shared.length > RecentParts.MAX) throw new Error(`OTLP encoding: ${shared.length} shared attribute parts`);
  for (let i = 0; i < shared.length; i++) {
    const part = shared[i];
    if (!parts.has(part)) parts.set(part, encodeAlone(sizeAttributes, writePart, part));
  }
}

/** The encoded frozen parts spans hold as their own (a subscriber's, on each of its deliver spans). */
const frozenParts = new WeakMap<object, Uint8Array>();

/**
 * The Span.attributes fields of `part` when it is frozen, encoded once per object (who freezes a
 * part promises it never changes, array values included, so its bytes stay true); null for any
 * other part, which is encoded each time. Between encodings only (encodeAlone). The entries are per
 * long-lived object (a subscriber's), never per message: weak entries for short-lived keys cost
 * every scavenge.
 */
export function frozenPartBytes(part: OtlpAttributes): Uint8Array | null {
  if (!Object.isFrozen(part)) return null;
  let bytes = frozenParts.get(part);
  if (bytes === undefined) {
    bytes = encodeAlone(sizeAttributes, writePart, part);
    frozenParts.set(part, bytes);
  }
  return bytes;
}

/** A shared part's Span.attributes fields. */
function writePart(part: OtlpAttributes): void {
  writeAttributes(0x4a, part);
}
