// Protobuf wire-format helpers of the OTLP encoder (otlp-proto.ts) that hold no encoder state:
// varint and field sizes, UTF-8 lengths, hex digits, span flags, and the encoded attribute keys.

// Span flags of the OTLP spec: the W3C trace flags, "has is_remote" and "is_remote".
const HAS_IS_REMOTE = 0x100;
const IS_REMOTE = 0x200;
export const INT64_MIN = -(2 ** 63);
export const INT64_END = 2 ** 63;

// The hex digit values the SDK's hexToBinary uses (0-9, a-f, and `c - 55` for anything else).
const HEX = new Int32Array(128);
for (let c = 0; c < 128; c++) HEX[c] = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c - 55;
export const hexValue = (c: number): number => (c < 128 ? HEX[c] : c - 55);

export function varintSize(v: number): number {
  return v < 0x80 ? 1 : v < 0x4000 ? 2 : v < 0x200000 ? 3 : v < 0x10000000 ? 4 : 5;
}

/** Size of a varint of any integral number as the SDK writes it (negatives: two's complement). */
export function varint64Size(v: number): number {
  if (v >= 0 && v <= 0xffffffff) return varintSize(v >>> 0);
  if (v < 0) return 10;
  let n = 5;
  for (let high = (v / 0x100000000) >>> 0; high >= 0x08; high >>>= 7) n++;
  return n;
}

/** Byte length of a field (tag of one byte, length, bytes) holding `len` bytes. */
export const delimited = (len: number): number => 1 + varintSize(len) + len;

export function utf8Length(s: string): number {
  const n = s.length;
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return Buffer.byteLength(s, "utf8");
  return n;
}

// Attribute keys repeat in every span: their encoded KeyValue.key fields are kept (up to a bound).
const keyCache = new Map<string, Uint8Array>();
const KEY_CACHE_MAX = 1024;

export function encodedKey(key: string): Uint8Array {
  let bytes = keyCache.get(key);
  if (bytes === undefined) {
    const len = Buffer.byteLength(key, "utf8");
    const b = Buffer.allocUnsafe(1 + varintSize(len) + len);
    b[0] = 0x0a;
    let p = 1;
    for (let v = len; ; v >>>= 7) {
      if (v <= 0x7f) {
        b[p++] = v;
        break;
      }
      b[p++] = (v & 0x7f) | 0x80;
    }
    b.write(key, p, "utf8");
    bytes = b;
    if (keyCache.size < KEY_CACHE_MAX) keyCache.set(key, bytes);
  }
  return bytes;
}

export function numberSize(v: number): number {
  return Number.isInteger(v) && v >= INT64_MIN && v < INT64_END ? 1 + varint64Size(v) : 9;
}

export function idSize(hex: string): number {
  return delimited(hex.length >>> 1);
}

export function spanFlags(traceFlags: number, isRemote: boolean | undefined): number {
  return (traceFlags & 0xff) | HAS_IS_REMOTE | (isRemote ? IS_REMOTE : 0);
}
