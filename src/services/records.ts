// Records kept by id under one key prefix of the cluster store (apps, dashboard users): the small
// view the services need, JSON-encoded, one key per record (ClusterKeys names it). `insert` is a
// compare-and-swap, so two nodes creating the same id cannot both succeed. MemoryRecords serves
// unit tests.

import type { ClusterStore } from "../cluster/store.ts";
import { decodeJson, encodeJson } from "../cluster/store-json.ts";

export interface RecordStore<T> {
  get(id: string): Promise<T | undefined>;
  /** Creates or replaces. */
  put(id: string, rec: T): Promise<void>;
  /** Creates; false (and nothing written) when the id exists. */
  insert(id: string, rec: T): Promise<boolean>;
  /** False when there was nothing to delete. */
  delete(id: string): Promise<boolean>;
  /** Every record, in key order. */
  list(): Promise<T[]>;
}

/** Records under `prefix`; `key(id)` must be `prefix` plus one key segment. */
export function storeRecords<T>(store: ClusterStore, prefix: string, key: (id: string) => string): RecordStore<T> {
  const encode = (rec: T): Buffer => encodeJson(rec);
  const decode = (b: Buffer): T => decodeJson<T>(b);
  return {
    async get(id) {
      const e = await store.get(key(id));
      return e === undefined ? undefined : decode(e.value);
    },
    async put(id, rec) {
      await store.put(key(id), encode(rec));
    },
    insert(id, rec) {
      const k = key(id);
      return store.txn({
        compare: [{ key: k, target: "version", op: "==", value: 0 }],
        success: [{ type: "put", key: k, value: encode(rec) }],
      });
    },
    delete(id) {
      return store.delete(key(id));
    },
    async list() {
      return (await store.range(prefix)).entries.map((e) => decode(e.value));
    },
  };
}

export class MemoryRecords<T> implements RecordStore<T> {
  private readonly map = new Map<string, string>();

  async get(id: string): Promise<T | undefined> {
    const v = this.map.get(id);
    return v === undefined ? undefined : (JSON.parse(v) as T);
  }

  async put(id: string, rec: T): Promise<void> {
    this.map.set(id, JSON.stringify(rec));
  }

  async insert(id: string, rec: T): Promise<boolean> {
    if (this.map.has(id)) return false;
    this.map.set(id, JSON.stringify(rec));
    return true;
  }

  async delete(id: string): Promise<boolean> {
    return this.map.delete(id);
  }

  async list(): Promise<T[]> {
    return [...this.map.keys()].sort().map((k) => JSON.parse(this.map.get(k) as string) as T);
  }
}
