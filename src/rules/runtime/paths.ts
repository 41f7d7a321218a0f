// Nested reads and writes of maps and lists: `a.b[2].c`, `x[-1]`, slices `a[1..3]`, and the
// AS targets `AS a.b`, `AS l[0]` (prepend), `AS l[-0]` (append) - the family's emqx_rule_maps.
//
// Reads: a key applies to a map, an index to a list (1-based, negative counts from the end; 0
// finds nothing); a string or binary met on the way is JSON-decoded first (so `x.y` works when
// column x holds JSON text); anything missing gives undefined.
// Writes never modify their input: the maps and lists along the path are copied (the event's
// columns and decoded payloads are shared with other rules).

import { RuleEvalError } from "./errors.ts";
import { getOwn, isMap, isNull, type Row, setOwn, toBytes } from "./values.ts";

export const HEAD: unique symbol = Symbol("head");
export const TAIL: unique symbol = Symbol("tail");

/** One resolved path step: a key, an index, head/tail (AS targets), null (an unusable index). */
export type Step = string | number | typeof HEAD | typeof TAIL | null;

function decodeIfText(v: unknown): unknown {
  if (typeof v !== "string" && !(v instanceof Uint8Array)) return v;
  const text = typeof v === "string" ? v : toBytes(v).toString("utf8");
  const c = text.trimStart().charCodeAt(0);
  if (c !== 0x7b && c !== 0x5b) return undefined; // only objects and arrays have steps
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The value one step into `v`, undefined when absent. */
export function getStep(v: unknown, step: Step): unknown {
  if (typeof v === "string" || v instanceof Uint8Array) v = decodeIfText(v);
  if (typeof step === "string") return isMap(v) && Object.hasOwn(v, step) ? v[step] : undefined;
  if (typeof step === "number") {
    if (!Array.isArray(v) || !Number.isInteger(step) || step === 0) return undefined;
    const i = step > 0 ? step - 1 : v.length + step;
    return i >= 0 && i < v.length ? v[i] : undefined;
  }
  return undefined;
}

/** The value at `steps` (from index `from`) inside `v`. */
export function getPath(v: unknown, steps: readonly Step[], from = 0): unknown {
  for (let i = from; i < steps.length; i++) {
    if (isNull(v)) return undefined;
    v = getStep(v, steps[i]);
  }
  return v;
}

function setNth(list: unknown[] | null, step: Step, v: unknown): unknown[] {
  if (list === null) return [v];
  if (step === HEAD) return [v, ...list];
  if (step === TAIL) return [...list, v];
  if (typeof step !== "number" || !Number.isInteger(step) || step === 0) return list;
  const i = step > 0 ? step - 1 : list.length + step;
  if (i < 0 || i >= list.length) return list;
  const copy = list.slice();
  copy[i] = v;
  return copy;
}

/** A copy of `data` with `val` stored at `steps[from..]` (maps and lists created as needed). */
export function putPath(data: unknown, steps: readonly Step[], from: number, val: unknown): unknown {
  if (from === steps.length) return val;
  const step = steps[from];
  let cur = data;
  if (typeof cur === "string" || cur instanceof Uint8Array) cur = decodeIfText(cur);
  if (typeof step === "string") {
    const m: Row = isMap(cur) ? { ...cur } : {};
    setOwn(m, step, putPath(getOwn(m, step), steps, from + 1, val));
    return m;
  }
  const list = Array.isArray(cur) ? cur : null;
  const inner = from + 1 === steps.length ? val : putPath(getStep(list, step), steps, from + 1, val);
  return setNth(list, step, inner);
}

function sliceIndex(i: number, len: number): number {
  if (i === 0) throw new RuleEvalError("invalid_index: 0");
  return i > 0 ? i : len + i + 1;
}

/** `list[from..to]`, 1-based and inclusive; negative ends count from the end. */
export function rangeGet(from: number, to: number, v: unknown): unknown[] {
  if (!Array.isArray(v)) throw new RuleEvalError("range_get: non_list_data");
  const b = Math.max(1, sliceIndex(from, v.length));
  const e = sliceIndex(to, v.length);
  return e < b ? [] : v.slice(b - 1, e);
}

const MAX_RANGE = 1_000_000;

/** `[from..to]`: the integers from..to (empty when to < from). */
export function rangeGen(from: number, to: number): number[] {
  if (to - from + 1 > MAX_RANGE) throw new RuleEvalError(`range_too_large: [${from}..${to}]`);
  const out: number[] = [];
  for (let i = from; i <= to; i++) out.push(i);
  return out;
}
