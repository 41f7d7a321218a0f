// Codec functions (emqx-facts 1.2): base64_encode / base64_decode (standard alphabet, padding
// optional on decode), json_encode / json_decode, term_encode / term_decode.
//
// term_encode / term_decode: there is no Erlang external term format here, so svc uses a
// documented JSON-based stand-in that round-trips every SQL value. term_encode(v) is a binary:
// the byte 0x83 (the version byte of Erlang's format, which also makes the result invalid
// UTF-8, so it stays a binary) followed by the UTF-8 JSON of v where
//   strings, numbers, booleans, null are themselves; lists are JSON arrays;
//   a map is {"$map": {key: encoded value, ...}};
//   a binary that is not text is {"$bin": "<base64>"}; a date (mongo_date) is {"$date": <ms>}.
// term_decode accepts exactly that (a string or binary) and fails on anything else. Binaries
// made by the family's term_to_binary cannot be decoded.

import { Buffer } from "node:buffer";
import { RuleEvalError } from "../errors.ts";
import { binOut, isMap, isNull, jsonDecode, jsonEncode, type Row, setOwn, toBytes } from "../values.ts";
import { argBytes, argStr } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

const B64_RE = /^[A-Za-z0-9+/]*={0,2}$/;
const TERM_MAGIC = 0x83;

function b64decode(s: string): string | Buffer {
  const clean = s.replace(/[\r\n\t ]/g, "");
  if (!B64_RE.test(clean) || clean.replace(/=+$/, "").length % 4 === 1) {
    throw new RuleEvalError("badarg: base64_decode of invalid base64");
  }
  return binOut(Buffer.from(clean, "base64"));
}

function toTagged(v: unknown): unknown {
  if (isNull(v)) return null;
  if (typeof v === "string" || typeof v === "number" || typeof v === "boolean") return v;
  if (v instanceof Uint8Array) {
    const b = binOut(toBytes(v));
    return typeof b === "string" ? b : { $bin: b.toString("base64") };
  }
  if (v instanceof Date) return { $date: v.getTime() };
  if (Array.isArray(v)) return v.map(toTagged);
  if (isMap(v)) {
    const m: Row = {};
    for (const k of Object.keys(v)) setOwn(m, k, toTagged(v[k]));
    return { $map: m };
  }
  throw new RuleEvalError(`badarg: term_encode of ${typeof v}`);
}

function fromTagged(v: unknown): unknown {
  if (v === null || typeof v !== "object") return v;
  if (Array.isArray(v)) return v.map(fromTagged);
  const o = v as Row;
  const keys = Object.keys(o);
  if (keys.length === 1) {
    if (keys[0] === "$bin" && typeof o.$bin === "string") return Buffer.from(o.$bin, "base64");
    if (keys[0] === "$date" && typeof o.$date === "number") return new Date(o.$date);
    if (keys[0] === "$map" && isMap(o.$map)) {
      const m: Row = {};
      const src = o.$map;
      for (const k of Object.keys(src)) setOwn(m, k, fromTagged(src[k]));
      return m;
    }
  }
  throw new RuleEvalError("badarg: term_decode of data term_encode did not make");
}

export function termEncode(v: unknown): Buffer {
  return Buffer.concat([Buffer.from([TERM_MAGIC]), Buffer.from(JSON.stringify(toTagged(v)), "utf8")]);
}

export function termDecode(b: Buffer): unknown {
  if (b.length < 2 || b[0] !== TERM_MAGIC)
    throw new RuleEvalError("badarg: term_decode of data term_encode did not make");
  return fromTagged(jsonDecode(b.subarray(1)));
}

export const codecFunctions: FnTable = {
  base64_encode: fn(1, (a) => argBytes("base64_encode", a, 0).toString("base64")),
  base64_decode: fn(1, (a) => b64decode(argStr("base64_decode", a, 0))),
  json_encode: fn(1, (a) => jsonEncode(a[0])),
  json_decode: fn(1, (a) => jsonDecode(argBytes("json_decode", a, 0))),
  term_encode: fn(1, (a) => termEncode(a[0])),
  term_decode: fn(1, (a) => termDecode(argBytes("term_decode", a, 0))),
};
