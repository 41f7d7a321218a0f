// The cluster store seam: a small key-value interface with etcd's semantics (revisions, prefix
// ranges, compare-and-swap transactions, ordered watches, leases), implemented by the embedded
// MemoryStore (single node, persisted in the data dir) and by EtcdStore (clusters). Everything the
// API can create and everything nodes share (members, routes) lives behind it. Keys are plain
// strings built by ClusterKeys (keys.ts); values are bytes (store-json.ts for JSON values).

import type { StoreError } from "./store-errors.ts";

/** One key as stored, with etcd's bookkeeping. */
export interface Entry {
  key: string;
  value: Buffer;
  /** Revision of the write that created the key (since it last was absent). */
  createRevision: number;
  /** Revision of the last write to the key. */
  modRevision: number;
  /** Writes since creation: 1 after the first put; an absent key counts as version 0. */
  version: number;
  /** Id of the lease the key is attached to, if any. */
  lease?: string;
}

/** A prefix range: entries sorted by key (byte order of the UTF-8 key), read at `revision`. */
export interface RangeResult {
  entries: Entry[];
  /** The store revision the range was read at; watch from `revision + 1` to miss nothing. */
  revision: number;
}

export interface PutOptions {
  /** Attach the key to this lease: it vanishes when the lease expires or is revoked. */
  lease?: Lease;
}

export type CompareOp = "==" | "!=" | "<" | ">";

/**
 * One condition of a transaction. `version == 0` means "the key is absent"; `create`/`mod` are
 * revisions (0 for an absent key). A `value` comparison on an absent key is false, as in etcd.
 */
export type Compare =
  | { key: string; target: "version" | "mod" | "create"; op: CompareOp; value: number }
  | { key: string; target: "value"; op: CompareOp; value: Buffer | string };

export type TxnOp =
  | { type: "put"; key: string; value: Buffer; lease?: Lease }
  | { type: "delete"; key: string }
  | { type: "deletePrefix"; prefix: string };

/** All compares true -> `success` ops, otherwise `failure` ops; atomically, at one revision. */
export interface Txn {
  compare: Compare[];
  success?: TxnOp[];
  failure?: TxnOp[];
}

/** A change seen by a watcher. `value` is empty for deletes (lease expiry included). */
export interface WatchEvent {
  type: "put" | "delete";
  key: string;
  value: Buffer;
  /** Revision of the change; events arrive in revision order (a transaction's share one). */
  revision: number;
}

export interface WatchOptions {
  /** Deliver history from this revision on (e.g. a range's `revision + 1`); default: new changes only. */
  fromRevision?: number;
  /**
   * The watch ended and will deliver nothing more (its history was compacted while it was away):
   * read again with range() and watch again. Disconnections that resume are not reported.
   */
  onError?: (err: StoreError) => void;
}

export interface WatchHandle {
  /** Stops delivery at once: no event is delivered after close() is called. */
  close(): Promise<void>;
}

export interface LeaseOptions {
  /** Keep the lease alive automatically (every ttl/3) until revoked; default true. */
  keepAlive?: boolean;
}

/** A time-to-live shared by keys; the holder keeps it alive, keys go when it dies. */
export interface Lease {
  readonly id: string;
  readonly ttlMs: number;
  /** Deletes the lease and its keys now (watchers see the deletes). Never fires onLost. */
  revoke(): Promise<void>;
  /**
   * Called once if the lease is found expired (keep-alive failed for longer than the TTL, or the
   * lease ran out without keep-alive): its keys are gone; grant a new lease and put them again.
   */
  onLost(cb: (err: Error) => void): void;
}

export interface ClusterStore {
  get(key: string): Promise<Entry | undefined>;
  /** Returns the revision of the write. */
  put(key: string, value: Buffer, opts?: PutOptions): Promise<number>;
  /** Returns whether the key existed. */
  delete(key: string): Promise<boolean>;
  range(prefix: string): Promise<RangeResult>;
  /** Returns how many keys were deleted. */
  deletePrefix(prefix: string): Promise<number>;
  /** Returns whether the compares held (and the success branch ran). */
  txn(txn: Txn): Promise<boolean>;
  /** Resolves once the watch is established: changes made after that are all delivered. */
  watch(prefix: string, onEvent: (ev: WatchEvent) => void, opts?: WatchOptions): Promise<WatchHandle>;
  /** TTLs are raised to the implementation's minimum (etcd: whole seconds, at least 1 s). */
  grantLease(ttlMs: number, opts?: LeaseOptions): Promise<Lease>;
  /** Ends watches and keep-alives; keys under leases still alive expire after their TTL. */
  close(): Promise<void>;
}
