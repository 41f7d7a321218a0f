// Type check functions (emqx-facts 1.2): is_null, is_not_null, is_str, is_bool, is_int,
// is_float, is_num, is_map, is_array. A JSON null counts as null. Numbers with an integral
// value are integers (see values.ts: `1.0` cannot be told from `1`).

import { isMap, isNull } from "../values.ts";
import { type FnTable, fn } from "./types.ts";

export const checkFunctions: FnTable = {
  is_null: fn(1, (a) => isNull(a[0])),
  is_not_null: fn(1, (a) => !isNull(a[0])),
  is_str: fn(1, (a) => typeof a[0] === "string" || a[0] instanceof Uint8Array),
  is_bool: fn(1, (a) => typeof a[0] === "boolean"),
  is_int: fn(1, (a) => typeof a[0] === "number" && Number.isInteger(a[0])),
  is_float: fn(1, (a) => typeof a[0] === "number" && !Number.isInteger(a[0])),
  is_num: fn(1, (a) => typeof a[0] === "number"),
  is_map: fn(1, (a) => isMap(a[0])),
  is_array: fn(1, (a) => Array.isArray(a[0])),
};
