// Type conversion functions (emqx-facts 1.2): str and str_utf8 (any value as text: maps and
// lists as JSON, numbers as the family prints them), bool ('true'/'false'/1/0), int (strings
// parsed, floats rounded down, booleans 1/0), float, float2str(float, decimals) (trailing zeros
// dropped, one kept), map (JSON text, a list of [key, value] pairs, or a map), bin2hexstr
// (upper-case hex) and hexstr2bin.

import { Buffer } from "node:buffer";
import { RuleEvalError } from "../errors.ts";
import {
  binOut,
  isMap,
  jsonDecode,
  parseNumber,
  type Row,
  setOwn,
  short,
  textOf,
  toText,
  trimFraction,
} from "../values.ts";
import { argBytes, argInt, argNum, argStr } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

function toBool(v: unknown): boolean {
  if (v === true || v === 1 || v === "true") return true;
  if (v === false || v === 0 || v === "false") return false;
  const t = textOf(v);
  if (t === "true") return true;
  if (t === "false") return false;
  throw new RuleEvalError(`invalid_boolean: ${short(v)}`);
}

function toInt(v: unknown): number {
  if (typeof v === "number") return Math.floor(v);
  if (typeof v === "boolean") return v ? 1 : 0;
  const t = textOf(v);
  if (t !== null) {
    const n = parseNumber(t);
    if (n !== null) return Math.floor(n);
  }
  throw new RuleEvalError(`invalid_number: ${short(v)}`);
}

function toFloat(v: unknown): number {
  if (typeof v === "number") return v;
  const t = textOf(v);
  if (t !== null) {
    const n = parseNumber(t);
    if (n !== null) return n;
  }
  throw new RuleEvalError(`invalid_number: ${short(v)}`);
}

function toMap(v: unknown): Row {
  if (isMap(v)) return v;
  if (typeof v === "string" || v instanceof Uint8Array) {
    const m = jsonDecode(v);
    if (isMap(m)) return m;
  } else if (Array.isArray(v)) {
    const m: Row = {};
    for (const pair of v) {
      if (!Array.isArray(pair) || pair.length !== 2) throw new RuleEvalError(`invalid_map: ${short(v)}`);
      setOwn(m, toText(pair[0]), pair[1]);
    }
    return m;
  }
  throw new RuleEvalError(`invalid_map: ${short(v)}`);
}

const HEX_RE = /^(?:[0-9a-fA-F]{2})*$/;

export const convertFunctions: FnTable = {
  str: fn(1, (a) => toText(a[0])),
  str_utf8: fn(1, (a) => toText(a[0])),
  bool: fn(1, (a) => toBool(a[0])),
  int: fn(1, (a) => toInt(a[0])),
  float: fn(1, (a) => toFloat(a[0])),
  float2str: fn(2, (a) => {
    const f = argNum("float2str", a, 0);
    const p = argInt("float2str", a, 1);
    if (p < 0 || p > 100) throw new RuleEvalError(`badarg: float2str precision ${p}`);
    return trimFraction(f.toFixed(p));
  }),
  map: fn(1, (a) => toMap(a[0])),
  bin2hexstr: fn(1, (a) => argBytes("bin2hexstr", a, 0).toString("hex").toUpperCase()),
  hexstr2bin: fn(1, (a) => {
    const s = argStr("hexstr2bin", a, 0);
    if (!HEX_RE.test(s)) throw new RuleEvalError(`badarg: hexstr2bin(${short(s)})`);
    return binOut(Buffer.from(s, "hex"));
  }),
};
