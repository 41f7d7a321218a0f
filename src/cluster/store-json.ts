// JSON values over a ClusterStore: the metadata the API creates (rules, bans, apps...) is JSON,
// stored as UTF-8 bytes so that etcdctl shows it readably.

import type { ClusterStore, Entry, PutOptions } from "./store.ts";

export function encodeJson(value: unknown): Buffer {
  return Buffer.from(JSON.stringify(value), "utf8");
}

export function decodeJson<T>(value: Buffer): T {
  return JSON.parse(value.toString("utf8")) as T;
}

/** The key's value parsed as JSON, or undefined when the key is absent. */
export async function getJson<T>(store: ClusterStore, key: string): Promise<T | undefined> {
  const entry = await store.get(key);
  return entry === undefined ? undefined : decodeJson<T>(entry.value);
}

export function putJson(store: ClusterStore, key: string, value: unknown, opts?: PutOptions): Promise<number> {
  return store.put(key, encodeJson(value), opts);
}

/** The entries of a range parsed as JSON, keyed by their full key, in key order. */
export function entriesJson<T>(entries: readonly Entry[]): Map<string, T> {
  const out = new Map<string, T>();
  for (const e of entries) out.set(e.key, decodeJson<T>(e.value));
  return out;
}
