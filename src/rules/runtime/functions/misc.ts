// Miscellaneous functions (emqx-facts 1.2): random() (a float in [0, 1)), uuid_v4(),
// uuid_v4_no_hyphen(); proc_dict_get/put/del (a dictionary that lives for one evaluation: put
// and del return the previous value); kv_store_get(key[, default]) / kv_store_put(key, value)
// / kv_store_del(key) (one dictionary for the whole process, shared by all rules, not
// replicated across the cluster; put and del return true). Keys are compared as values:
// strings, numbers and booleans as they are, other values by their JSON text.

import { randomUUID } from "node:crypto";
import { isNull, jsonEncode, textOf } from "../values.ts";
import { envFn, type FnTable, fn } from "./types.ts";

const kvStore = new Map<unknown, unknown>();

/** Empties the process-wide kv_store (tests). */
export function clearKvStore(): void {
  kvStore.clear();
}

function key(k: unknown): unknown {
  if (isNull(k)) return null;
  if (k instanceof Uint8Array) return textOf(k);
  if (typeof k === "object") return `\u0000${jsonEncode(k)}`;
  return k;
}

export const miscFunctions: FnTable = {
  random: fn(0, () => Math.random()),
  uuid_v4: fn(0, () => randomUUID()),
  uuid_v4_no_hyphen: fn(0, () => randomUUID().replaceAll("-", "")),
  proc_dict_get: envFn(1, (a, env) => env.procDict().get(key(a[0]))),
  proc_dict_put: envFn(2, (a, env) => {
    const d = env.procDict();
    const k = key(a[0]);
    const old = d.get(k);
    d.set(k, a[1]);
    return old;
  }),
  proc_dict_del: envFn(1, (a, env) => {
    const d = env.procDict();
    const k = key(a[0]);
    const old = d.get(k);
    d.delete(k);
    return old;
  }),
  kv_store_get: fn([1, 2], (a) => {
    const k = key(a[0]);
    return kvStore.has(k) ? kvStore.get(k) : a[1];
  }),
  kv_store_put: fn(2, (a) => {
    kvStore.set(key(a[0]), a[1]);
    return true;
  }),
  kv_store_del: fn(1, (a) => {
    kvStore.delete(key(a[0]));
    return true;
  }),
};
