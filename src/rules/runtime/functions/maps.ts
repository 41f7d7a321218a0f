// Map functions (emqx-facts 1.2): map_new(); map_get(key, map[, default]) and
// map_put(key, value, map) where key may be a dotted path ("a.b.c"; a map given as JSON text
// is decoded); mget(key, map[, default]) and mput(key, value, map) with a plain key. Results
// are new maps: the argument is never modified.

import { RuleEvalError } from "../errors.ts";
import { getPath, putPath, type Step } from "../paths.ts";
import { getOwn, isMap, isNull, type Row, setOwn, short, toText } from "../values.ts";
import { argStr } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

function keyPath(fname: string, a: unknown[]): Step[] {
  return argStr(fname, a, 0).split(".");
}

function plainMap(fname: string, v: unknown): Row {
  if (!isMap(v)) throw new RuleEvalError(`badmap: ${fname} of ${short(v)}`);
  return v;
}

export const mapFunctions: FnTable = {
  map_new: fn(0, () => ({})),
  map_get: fn([2, 3], (a) => {
    const v = getPath(a[1], keyPath("map_get", a));
    return isNull(v) ? a[2] : v;
  }),
  map_put: fn(3, (a) => putPath(a[2], keyPath("map_put", a), 0, a[1])),
  mget: fn([2, 3], (a) => {
    const v = getOwn(plainMap("mget", a[1]), toText(a[0]));
    return isNull(v) ? a[2] : v;
  }),
  mput: fn(3, (a) => {
    const m = { ...plainMap("mput", a[2]) };
    setOwn(m, toText(a[0]), a[1]);
    return m;
  }),
};
