// The embedded ClusterStore of a single node: a sorted in-memory map with etcd's revisions,
// compare-and-swap transactions, leases (unref'd timers) and watchers, made durable by StoreLog in
// `<data_dir>/store/` so that rules, resources, bans, apps, users and auth data survive a restart.
// Keys under a lease are not persisted: their lease dies with the process. No outside service.

import { compareKeys } from "./key-order.ts";
import type {
  ClusterStore,
  Compare,
  Entry,
  Lease,
  LeaseOptions,
  PutOptions,
  RangeResult,
  Txn,
  TxnOp,
  WatchEvent,
  WatchHandle,
  WatchOptions,
} from "./store.ts";
import { LeaseNotFoundError, StoreClosedError, StoreError } from "./store-errors.ts";
import { type LogOp, StoreLog } from "./store-log.ts";
import { WatchHub } from "./watch-hub.ts";

export interface MemoryStoreOptions {
  /** Directory of the log (`<data_dir>/store`); without it nothing is persisted. */
  dir?: string;
  /** Longest time a write waits for its fsync (default 100 ms). */
  fsyncIntervalMs?: number;
  /** Events kept for watches starting at a past revision (default 4096). */
  watchHistory?: number;
  /** Where errors nobody awaits go (a throwing watch callback, a dropped log tail). */
  onError?: (err: unknown) => void;
}

export class MemoryStore implements ClusterStore {
  private readonly entries = new Map<string, Entry>();
  /** The keys of `entries` in etcd order. */
  private sorted: string[] = [];
  private revision = 0;
  private readonly leases = new Map<string, MemoryLease>();
  private nextLeaseId = 1;
  private readonly log: StoreLog | undefined;
  private readonly hub: WatchHub;
  private readonly onError: (err: unknown) => void;
  private closed = false;

  constructor(opts: MemoryStoreOptions = {}) {
    this.onError = opts.onError ?? defaultOnError;
    if (opts.dir !== undefined) {
      const { log, state } = StoreLog.open(opts.dir, opts.fsyncIntervalMs ?? 100);
      this.log = log;
      this.revision = state.revision;
      for (const [key, e] of state.entries) this.entries.set(key, { key, ...e });
      this.sorted = [...this.entries.keys()].sort(compareKeys);
      if (state.droppedBytes > 0) {
        this.onError(new StoreError(`store log: dropped ${state.droppedBytes} unreadable bytes at its end`));
      }
    }
    this.hub = new WatchHub(opts.watchHistory ?? 4096, this.revision, this.onError);
  }

  async get(key: string): Promise<Entry | undefined> {
    this.check();
    const e = this.entries.get(key);
    return e === undefined ? undefined : { ...e };
  }

  async put(key: string, value: Buffer, opts: PutOptions = {}): Promise<number> {
    this.check();
    this.write([{ type: "put", key, value, lease: opts.lease }]);
    return this.revision;
  }

  async delete(key: string): Promise<boolean> {
    this.check();
    const existed = this.entries.has(key);
    this.write([{ type: "delete", key }]);
    return existed;
  }

  async range(prefix: string): Promise<RangeResult> {
    this.check();
    return {
      entries: this.keysWithPrefix(prefix).map((k) => ({ ...(this.entries.get(k) as Entry) })),
      revision: this.revision,
    };
  }

  async deletePrefix(prefix: string): Promise<number> {
    this.check();
    const n = this.keysWithPrefix(prefix).length;
    this.write([{ type: "deletePrefix", prefix }]);
    return n;
  }

  async txn(txn: Txn): Promise<boolean> {
    this.check();
    const ok = txn.compare.every((c) => holds(c, this.entries.get(c.key)));
    this.write((ok ? txn.success : txn.failure) ?? []);
    return ok;
  }

  async watch(prefix: string, onEvent: (ev: WatchEvent) => void, opts: WatchOptions = {}): Promise<WatchHandle> {
    this.check();
    return this.hub.add(prefix, onEvent, opts.fromRevision);
  }

  async grantLease(ttlMs: number, opts: LeaseOptions = {}): Promise<Lease> {
    this.check();
    if (!(ttlMs > 0)) throw new RangeError(`lease TTL must be positive, got ${ttlMs}`);
    const id = (this.nextLeaseId++).toString(16);
    const lease = new MemoryLease(id, ttlMs, () => this.endLease(lease, undefined), this.onError);
    this.leases.set(id, lease);
    // A kept-alive lease is held by this very process, whose keep-alive cannot fail: it lives until
    // revoked or the store closes. Without keep-alive it runs out after its TTL.
    if (opts.keepAlive === false) {
      lease.timer = setTimeout(() => this.endLease(lease, new Error(`lease ${id} expired`)), ttlMs);
      lease.timer.unref();
    }
    return lease;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.hub.closeAll();
    for (const lease of this.leases.values()) clearTimeout(lease.timer);
    this.leases.clear();
    this.log?.close();
  }

  private check(): void {
    if (this.closed) throw new StoreClosedError();
  }

  /** Deletes a lease and its keys at one revision; `lost` set: the holder is told. */
  private endLease(lease: MemoryLease, lost: Error | undefined): void {
    if (this.closed || this.leases.get(lease.id) !== lease) return;
    this.leases.delete(lease.id);
    clearTimeout(lease.timer);
    this.write([...lease.keys].map((key): TxnOp => ({ type: "delete", key })));
    if (lost !== undefined) lease.fireLost(lost);
  }

  /** Applies ops atomically at the next revision (if they change anything), logs and publishes. */
  private write(ops: readonly TxnOp[]): void {
    this.validate(ops);
    const rev = this.revision + 1;
    const events: WatchEvent[] = [];
    const logged: LogOp[] = [];
    const remove = (key: string): void => {
      const old = this.entries.get(key);
      if (old === undefined) return;
      this.entries.delete(key);
      this.sorted.splice(this.lowerBound(key), 1);
      if (old.lease === undefined) logged.push({ op: "del", key });
      else this.leases.get(old.lease)?.keys.delete(key);
      events.push({ type: "delete", key, value: Buffer.alloc(0), revision: rev });
    };
    for (const op of ops) {
      if (op.type === "delete") remove(op.key);
      else if (op.type === "deletePrefix") for (const key of this.keysWithPrefix(op.prefix)) remove(key);
      else {
        const old = this.entries.get(op.key);
        const value = Buffer.from(op.value);
        const leaseId = op.lease?.id;
        const e: Entry = {
          key: op.key,
          value,
          createRevision: old?.createRevision ?? rev,
          modRevision: rev,
          version: (old?.version ?? 0) + 1,
        };
        if (leaseId !== undefined) e.lease = leaseId;
        if (old === undefined) this.sorted.splice(this.lowerBound(op.key), 0, op.key);
        else if (old.lease !== undefined && old.lease !== leaseId) this.leases.get(old.lease)?.keys.delete(op.key);
        this.entries.set(op.key, e);
        if (leaseId !== undefined) {
          this.leases.get(leaseId)?.keys.add(op.key);
          // Not persisted; an older persisted value must not come back at the next start.
          if (old !== undefined && old.lease === undefined) logged.push({ op: "del", key: op.key });
        } else {
          logged.push({ op: "put", key: op.key, value, createRevision: e.createRevision, version: e.version });
        }
        events.push({ type: "put", key: op.key, value, revision: rev });
      }
    }
    if (events.length === 0) return;
    this.revision = rev;
    if (this.log !== undefined) {
      this.log.append(rev, logged);
      if (this.log.needsCompaction(this.entries.size)) this.log.compact(rev, this.persisted());
    }
    this.hub.publish(events);
  }

  /** Refuses, before any change, what etcd refuses: unknown leases, a key written twice. */
  private validate(ops: readonly TxnOp[]): void {
    const puts = new Set<string>();
    for (const op of ops) {
      if (op.type !== "put") continue;
      if (op.lease !== undefined && this.leases.get(op.lease.id) !== op.lease) {
        throw new LeaseNotFoundError(`lease ${op.lease.id} not found`);
      }
      if (puts.has(op.key)) throw new StoreError(`duplicate key given in txn request: ${op.key}`);
      puts.add(op.key);
    }
    for (const op of ops) {
      const hit =
        op.type === "delete"
          ? puts.has(op.key)
          : op.type === "deletePrefix" && [...puts].some((k) => k.startsWith(op.prefix));
      if (hit) throw new StoreError("duplicate key given in txn request: a key is both put and deleted");
    }
  }

  private *persisted(): Iterable<
    [string, { value: Buffer; createRevision: number; modRevision: number; version: number }]
  > {
    for (const e of this.entries.values()) if (e.lease === undefined) yield [e.key, e];
  }

  private keysWithPrefix(prefix: string): string[] {
    const out: string[] = [];
    for (let i = this.lowerBound(prefix); i < this.sorted.length && this.sorted[i].startsWith(prefix); i++) {
      out.push(this.sorted[i]);
    }
    return out;
  }

  /** Index of the first key >= `key` in `sorted`. */
  private lowerBound(key: string): number {
    let lo = 0;
    let hi = this.sorted.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (compareKeys(this.sorted[mid], key) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
}

class MemoryLease implements Lease {
  readonly keys = new Set<string>();
  timer: NodeJS.Timeout | undefined;
  private readonly lost: ((err: Error) => void)[] = [];

  constructor(
    readonly id: string,
    readonly ttlMs: number,
    private readonly end: () => void,
    private readonly onError: (err: unknown) => void,
  ) {}

  async revoke(): Promise<void> {
    this.end();
  }

  onLost(cb: (err: Error) => void): void {
    this.lost.push(cb);
  }

  fireLost(err: Error): void {
    for (const cb of this.lost.splice(0)) {
      try {
        cb(err);
      } catch (e) {
        this.onError(e);
      }
    }
  }
}

function holds(c: Compare, e: Entry | undefined): boolean {
  if (c.target === "value") {
    if (e === undefined) return false; // as etcd: a value compare on an absent key fails
    return test(Buffer.compare(e.value, typeof c.value === "string" ? Buffer.from(c.value, "utf8") : c.value), c.op);
  }
  if (e === undefined) return test(0 - c.value, c.op);
  const actual = c.target === "version" ? e.version : c.target === "mod" ? e.modRevision : e.createRevision;
  return test(actual - c.value, c.op);
}

function test(diff: number, op: Compare["op"]): boolean {
  switch (op) {
    case "==":
      return diff === 0;
    case "!=":
      return diff !== 0;
    case "<":
      return diff < 0;
    case ">":
      return diff > 0;
  }
}

function defaultOnError(err: unknown): void {
  process.emitWarning(err instanceof Error ? err : String(err), { code: "SVC_STORE" });
}
