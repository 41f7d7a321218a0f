// The value model of rule SQL in JavaScript, and the conversions every part shares.
//
// The family's values are Erlang terms; here they are:
//   null / undefined  the atom `undefined` (a missing column, `null()`, JSON null)
//   string            a text binary (columns, literals, most function results)
//   Uint8Array/Buffer a binary that is not valid UTF-8 (gzip, hexstr2bin...): functions that
//                     make binaries return a string when the bytes are valid UTF-8 (binOut)
//   number            integer or float: JavaScript cannot tell `1` from `1.0`, so a float with
//                     an integral value behaves as an integer (is_int(2.0) is true, str(2.0)
//                     is "2")
//   boolean           the atoms true/false
//   array             a list
//   plain object      a map
// Equality (`=`) is Erlang's `==` (structural; a binary equals a string with the same bytes);
// ordering (`<`) follows Erlang's term order across types (number < atom < map < list < binary).

import { Buffer, isUtf8 } from "node:buffer";
import { RuleEvalError } from "./errors.ts";

export type Row = Record<string, unknown>;

export function isNull(v: unknown): v is null | undefined {
  return v === null || v === undefined;
}

export function isBinary(v: unknown): v is Uint8Array {
  return v instanceof Uint8Array;
}

/** A map: a plain object (not an array, a binary or a Date). */
export function isMap(v: unknown): v is Row {
  return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof Uint8Array) && !(v instanceof Date);
}

/** obj[key] = v, also for the key "__proto__" (which a plain assignment would not store). */
export function setOwn(obj: Row, key: string, v: unknown): void {
  if (key === "__proto__")
    Object.defineProperty(obj, key, { value: v, writable: true, enumerable: true, configurable: true });
  else obj[key] = v;
}

/** obj[key] when obj has its own property key, else undefined. */
export function getOwn(obj: Row, key: string): unknown {
  return Object.hasOwn(obj, key) ? obj[key] : undefined;
}

export function isInteger(v: unknown): v is number {
  return typeof v === "number" && Number.isInteger(v);
}

/** Type names used in error messages. */
export function typeName(v: unknown): string {
  if (isNull(v)) return "undefined";
  if (typeof v === "string") return "string";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "float";
  if (typeof v === "boolean") return "boolean";
  if (Array.isArray(v)) return "array";
  if (v instanceof Uint8Array) return "binary";
  if (v instanceof Date) return "date";
  if (typeof v === "object") return "map";
  return typeof v;
}

/** The bytes of a string (UTF-8) or binary. */
export function toBytes(v: string | Uint8Array): Buffer {
  if (typeof v === "string") return Buffer.from(v, "utf8");
  return Buffer.isBuffer(v) ? v : Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

/** A function's binary result: a string when the bytes are valid UTF-8, else the bytes. */
export function binOut(b: Buffer): string | Buffer {
  return isUtf8(b) ? b.toString("utf8") : b;
}

/** The text of a string or binary, null for anything else. */
export function textOf(v: unknown): string | null {
  if (typeof v === "string") return v;
  if (v instanceof Uint8Array) return toBytes(v).toString("utf8");
  return null;
}

/** Erlang's float_to_binary(F, [{decimals, 10}, compact]); integers as digits. */
export function numberToText(n: number): string {
  if (Number.isInteger(n)) return Math.abs(n) < 1e21 ? String(n) : BigInt(n).toString();
  if (!Number.isFinite(n)) return String(n);
  if (Math.abs(n) >= 1e21 || (Math.abs(n) < 1e-10 && n !== 0)) return String(n);
  return trimFraction(n.toFixed(10));
}

/** "1.2500" -> "1.25", "2.000" -> "2.0" (Erlang's `compact`). */
export function trimFraction(s: string): string {
  if (!s.includes(".")) return s;
  let end = s.length;
  while (end > 0 && s[end - 1] === "0") end--;
  if (s[end - 1] === ".") end++;
  return s.slice(0, end);
}

/** Text of any value, as the family's `str()` (bin/1): maps and lists become JSON. */
export function toText(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number") return numberToText(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (isNull(v)) return "undefined";
  if (v instanceof Uint8Array) return toBytes(v).toString("utf8");
  if (v instanceof Date) return v.toISOString();
  return jsonEncode(v);
}

const INT_RE = /^[+-]?\d+$/;
const FLOAT_RE = /^[+-]?(\d+\.\d+([eE][+-]?\d+)?|\d+[eE][+-]?\d+)$/;

/** A number written as text (`12`, `-3`, `1.5`, `1.5e3`), null when it is not one. */
export function parseNumber(s: string): number | null {
  if (INT_RE.test(s) || FLOAT_RE.test(s)) return Number(s);
  return null;
}

/** Erlang `==`: structural equality; a binary equals a string with the same bytes. */
export function termEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (isNull(a) || isNull(b)) return isNull(a) && isNull(b);
  if (typeof a === "string" || a instanceof Uint8Array) {
    if (typeof b !== "string" && !(b instanceof Uint8Array)) return false;
    if (typeof a === "string" && typeof b === "string") return false;
    return toBytes(a).equals(toBytes(b));
  }
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!termEqual(a[i], b[i])) return false;
    return true;
  }
  if (a instanceof Date) return b instanceof Date && a.getTime() === b.getTime();
  if (isMap(a)) {
    if (!isMap(b)) return false;
    const ka = Object.keys(a);
    if (ka.length !== Object.keys(b).length) return false;
    for (const k of ka) if (!Object.hasOwn(b, k) || !termEqual(a[k], b[k])) return false;
    return true;
  }
  return false;
}

function rank(v: unknown): number {
  if (typeof v === "number") return 0;
  if (typeof v === "boolean" || isNull(v)) return 1;
  if (isMap(v) || v instanceof Date) return 3;
  if (Array.isArray(v)) return 4;
  return 5; // string, binary
}

/** Erlang term order: negative, 0 or positive. */
export function termCompare(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1: {
      const sa = isNull(a) ? "undefined" : String(a);
      const sb = isNull(b) ? "undefined" : String(b);
      return sa < sb ? -1 : sa > sb ? 1 : 0;
    }
    case 3: {
      const ma = a instanceof Date ? { date: a.getTime() } : (a as Row);
      const mb = b instanceof Date ? { date: b.getTime() } : (b as Row);
      const ka = Object.keys(ma).sort();
      const kb = Object.keys(mb).sort();
      if (ka.length !== kb.length) return ka.length - kb.length;
      for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
      for (const k of ka) {
        const c = termCompare(ma[k], mb[k]);
        if (c !== 0) return c;
      }
      return 0;
    }
    case 4: {
      const la = a as unknown[];
      const lb = b as unknown[];
      const n = Math.min(la.length, lb.length);
      for (let i = 0; i < n; i++) {
        const c = termCompare(la[i], lb[i]);
        if (c !== 0) return c;
      }
      return la.length - lb.length;
    }
    default:
      if (typeof a === "string" && typeof b === "string") return a < b ? -1 : a > b ? 1 : 0;
      return Buffer.compare(toBytes(a as string | Uint8Array), toBytes(b as string | Uint8Array));
  }
}

/** JSON.parse of a string or binary; throws RuleEvalError `decode_json_failed`. */
export function jsonDecode(v: string | Uint8Array): unknown {
  const text = typeof v === "string" ? v : toBytes(v).toString("utf8");
  try {
    return JSON.parse(text);
  } catch {
    throw new RuleEvalError(`decode_json_failed: ${short(text)}`);
  }
}

/** JSON text of a value: binaries as their UTF-8 text, undefined as null. */
export function jsonEncode(v: unknown): string {
  return JSON.stringify(v, function (this: Record<string, unknown>, key: string, value: unknown) {
    const orig = this[key];
    if (orig instanceof Uint8Array) return toBytes(orig).toString("utf8");
    return value === undefined ? null : value;
  });
}

/** A short printable form of a value for error messages. */
export function short(v: unknown): string {
  let s: string;
  if (typeof v === "string") s = `'${v}'`;
  else if (v === undefined || v === null) s = "undefined";
  else {
    try {
      s = toText(v);
    } catch {
      s = typeName(v);
    }
  }
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
}
