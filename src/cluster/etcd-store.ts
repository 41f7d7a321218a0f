// ClusterStore over etcd v3 (the `etcd3` client; this is the only file that imports it). Calls
// fail fast with StoreUnavailableError (cause: the client's error) when etcd cannot be reached and
// work again as soon as it is back: no circuit breaker holding calls off, short gRPC reconnect
// backoff, a deadline on every unary call. Watches resume after a disconnection from the last
// revision they delivered; leases are kept alive every ttl/3 and report their loss.

import {
  ClientClosedError,
  CompareResult,
  CompareTarget,
  castGrpcError,
  Etcd3,
  type Lease as EtcdLease,
  EtcdLeaseInvalidError,
  type ICompare,
  type IKeyValue,
  type IOptions,
  type IRequestOp,
  isRecoverableError,
  Range,
  type Watcher,
} from "etcd3";
import { prefixRangeEnd } from "./key-order.ts";
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
import {
  LeaseNotFoundError,
  StoreClosedError,
  StoreCompactedError,
  StoreError,
  StoreUnavailableError,
} from "./store-errors.ts";

export interface EtcdStoreOptions {
  /** etcd client URLs (`cluster.etcd.server`). */
  hosts: readonly string[];
  /** Deadline of one call (default 3000 ms): how long an unanswered etcd can hold a caller. */
  callTimeoutMs?: number;
  /** TLS material for https endpoints. */
  credentials?: IOptions["credentials"];
  /** Where errors nobody awaits go (a throwing watch callback, a watch that ended). */
  onError?: (err: unknown) => void;
}

const PAGE = 1000;

type FaultHandling = NonNullable<IOptions["faultHandling"]>;
type Policy = ReturnType<NonNullable<FaultHandling["host"]>>;
type Backoff = NonNullable<FaultHandling["watchBackoff"]>;

export class EtcdStore implements ClusterStore {
  private readonly client: Etcd3;
  private readonly callTimeoutMs: number;
  private readonly onError: (err: unknown) => void;
  private readonly watchers = new Set<Watcher>();
  private readonly leases = new Set<EtcdLease>();
  private closed = false;

  constructor(opts: EtcdStoreOptions) {
    this.callTimeoutMs = opts.callTimeoutMs ?? 3000;
    this.onError = opts.onError ?? defaultOnError;
    this.client = new Etcd3({
      hosts: [...opts.hosts],
      credentials: opts.credentials,
      defaultCallOptions: (ctx) => (ctx.isStream ? {} : { deadline: Date.now() + this.callTimeoutMs }),
      grpcOptions: {
        // A channel of its own, reconnecting quickly: recovery right after etcd is back.
        "grpc.use_local_subchannel_pool": 1,
        "grpc.initial_reconnect_backoff_ms": 100,
        "grpc.max_reconnect_backoff_ms": 1000,
        // Notice a silently dead connection (watch and keep-alive streams); etcd allows >= 5 s.
        "grpc.keepalive_time_ms": 10_000,
        "grpc.keepalive_timeout_ms": 5_000,
      },
      faultHandling: {
        host: () => passThrough,
        global: retryOnOtherHosts(Math.max(2, opts.hosts.length)),
        watchBackoff: cappedBackoff(50, 2000),
      },
    });
  }

  async get(key: string): Promise<Entry | undefined> {
    const res = await this.call(() => this.client.kv.range({ key: Buffer.from(key, "utf8") }));
    return res.kvs.length === 0 ? undefined : toEntry(res.kvs[0]);
  }

  async put(key: string, value: Buffer, opts: PutOptions = {}): Promise<number> {
    const res = await this.call(() =>
      this.client.kv.put({ key: Buffer.from(key, "utf8"), value, lease: opts.lease?.id ?? 0 }),
    );
    return Number(res.header.revision);
  }

  async delete(key: string): Promise<boolean> {
    const res = await this.call(() => this.client.kv.deleteRange({ key: Buffer.from(key, "utf8") }));
    return Number(res.deleted) > 0;
  }

  async range(prefix: string): Promise<RangeResult> {
    const { start, end } = prefixRange(prefix);
    const entries: Entry[] = [];
    let from = start;
    let revision: string | undefined;
    // Pages read at the first page's revision: one consistent view, however large.
    for (;;) {
      const res = await this.call(() =>
        this.client.kv.range({ key: from, range_end: end, limit: PAGE, revision: revision ?? 0 }),
      );
      revision ??= res.header.revision;
      for (const kv of res.kvs) entries.push(toEntry(kv));
      if (!res.more || res.kvs.length === 0) break;
      from = Buffer.concat([res.kvs[res.kvs.length - 1].key, Buffer.from([0])]);
    }
    return { entries, revision: Number(revision) };
  }

  async deletePrefix(prefix: string): Promise<number> {
    const { start, end } = prefixRange(prefix);
    const res = await this.call(() => this.client.kv.deleteRange({ key: start, range_end: end }));
    return Number(res.deleted);
  }

  async txn(txn: Txn): Promise<boolean> {
    const res = await this.call(() =>
      this.client.kv.txn({
        compare: txn.compare.map(toCompare),
        success: (txn.success ?? []).map(toRequestOp),
        failure: (txn.failure ?? []).map(toRequestOp),
      }),
    );
    return res.succeeded;
  }

  async watch(prefix: string, onEvent: (ev: WatchEvent) => void, opts: WatchOptions = {}): Promise<WatchHandle> {
    if (this.closed) throw new StoreClosedError();
    const { start, end } = prefixRange(prefix);
    const builder = this.client.watch().inRange(new Range(start, end));
    if (opts.fromRevision !== undefined) builder.startRevision(String(opts.fromRevision));
    const watcher = builder.watcher();
    this.watchers.add(watcher);
    let live = true;
    const deliver = (type: WatchEvent["type"], kv: IKeyValue): void => {
      if (!live) return;
      const value = type === "put" ? kv.value : Buffer.alloc(0);
      try {
        onEvent({ type, key: kv.key.toString("utf8"), value, revision: Number(kv.mod_revision) });
      } catch (err) {
        this.onError(err);
      }
    };
    watcher.on("put", (kv) => deliver("put", kv));
    watcher.on("delete", (kv) => deliver("delete", kv));
    const close = async (): Promise<void> => {
      if (!live) return;
      live = false;
      this.watchers.delete(watcher);
      await this.bounded(watcher.cancel());
    };
    return new Promise<WatchHandle>((resolve, reject) => {
      let settled = false;
      watcher.on("connected", () => {
        if (settled) return;
        settled = true;
        resolve({ close });
      });
      // Before the first connection, a disconnection fails the call; later ones are resumed.
      watcher.on("disconnected", (err: Error) => {
        if (settled) return;
        settled = true;
        void close();
        reject(toStoreError(err));
      });
      // Always listened to: an unhandled 'error' event would crash the process.
      watcher.on("error", (err: Error) => {
        const e = toStoreError(err);
        void close();
        if (!settled) {
          settled = true;
          reject(e);
        } else if (opts.onError !== undefined) opts.onError(e);
        else this.onError(e);
      });
    });
  }

  async grantLease(ttlMs: number, opts: LeaseOptions = {}): Promise<Lease> {
    if (this.closed) throw new StoreClosedError();
    if (!(ttlMs > 0)) throw new RangeError(`lease TTL must be positive, got ${ttlMs}`);
    const ttl = Math.max(1, Math.ceil(ttlMs / 1000));
    const lease = this.client.lease(ttl, { autoKeepAlive: opts.keepAlive !== false });
    const lost: ((err: Error) => void)[] = [];
    let revoked = false;
    lease.on("lost", (err: Error) => {
      this.leases.delete(lease);
      if (revoked) return;
      const e = new LeaseNotFoundError(`lease lost: ${err.message}`, { cause: err });
      for (const cb of lost.splice(0)) {
        try {
          cb(e);
        } catch (cbErr) {
          this.onError(cbErr);
        }
      }
    });
    this.leases.add(lease);
    let id: string;
    try {
      id = await lease.grant();
    } catch (err) {
      this.leases.delete(lease);
      lease.release();
      throw toStoreError(err);
    }
    return {
      id,
      ttlMs: ttl * 1000,
      revoke: async () => {
        revoked = true;
        this.leases.delete(lease);
        await this.call(() => lease.revoke());
      },
      onLost: (cb) => {
        lost.push(cb);
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const cancels = [...this.watchers].map((w) => this.bounded(w.cancel()));
    this.watchers.clear();
    await Promise.all(cancels);
    for (const lease of this.leases) lease.release();
    this.leases.clear();
    this.client.close();
  }

  /** Runs one etcd call, mapping every failure to a StoreError. */
  private async call<T>(fn: () => Promise<T>): Promise<T> {
    if (this.closed) throw new StoreClosedError();
    try {
      return await fn();
    } catch (err) {
      throw toStoreError(err);
    }
  }

  /** Waits for `p` at most one call timeout, never rejecting (for clean-ups). */
  private async bounded(p: Promise<unknown>): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.callTimeoutMs);
    });
    await Promise.race([p.catch(() => undefined), timeout]);
    clearTimeout(timer);
  }
}

function toStoreError(raw: unknown): StoreError {
  if (raw instanceof StoreError) return raw;
  // Stream errors (watch, keep-alive) arrive as plain gRPC errors: give them etcd3's classes.
  const err = raw instanceof Error ? castGrpcError(raw) : raw;
  const message = err instanceof Error ? err.message : String(err);
  if (err instanceof ClientClosedError) return new StoreClosedError({ cause: err });
  if (err instanceof EtcdLeaseInvalidError || /lease not found/.test(message)) {
    return new LeaseNotFoundError(message, { cause: err });
  }
  if (/compacted/.test(message)) return new StoreCompactedError(message, { cause: err });
  if (err instanceof Error && isRecoverableError(err)) {
    return new StoreUnavailableError(`etcd unavailable: ${message}`, { cause: err });
  }
  return new StoreError(message, { cause: err });
}

function toEntry(kv: IKeyValue): Entry {
  const e: Entry = {
    key: kv.key.toString("utf8"),
    value: kv.value,
    createRevision: Number(kv.create_revision),
    modRevision: Number(kv.mod_revision),
    version: Number(kv.version),
  };
  if (kv.lease !== "0" && kv.lease !== "") e.lease = kv.lease;
  return e;
}

function prefixRange(prefix: string): { start: Buffer; end: Buffer } {
  const start = Buffer.from(prefix, "utf8");
  // etcd needs a non-empty key: the whole key space is ["\0", "\0").
  return { start: start.length === 0 ? Buffer.from([0]) : start, end: prefixRangeEnd(start) };
}

const RESULTS: Record<Compare["op"], CompareResult> = {
  "==": CompareResult.Equal,
  "!=": CompareResult.NotEqual,
  "<": CompareResult.Less,
  ">": CompareResult.Greater,
};

function toCompare(c: Compare): ICompare {
  const base = { key: Buffer.from(c.key, "utf8"), result: RESULTS[c.op] };
  switch (c.target) {
    case "value":
      return { ...base, target: CompareTarget.Value, value: Buffer.from(c.value) };
    case "version":
      return { ...base, target: CompareTarget.Version, version: c.value };
    case "mod":
      return { ...base, target: CompareTarget.Mod, mod_revision: c.value };
    case "create":
      return { ...base, target: CompareTarget.Create, create_revision: c.value };
  }
}

function toRequestOp(op: TxnOp): IRequestOp {
  switch (op.type) {
    case "put":
      return { request_put: { key: Buffer.from(op.key, "utf8"), value: op.value, lease: op.lease?.id ?? 0 } };
    case "delete":
      return { request_delete_range: { key: Buffer.from(op.key, "utf8") } };
    case "deletePrefix": {
      const { start, end } = prefixRange(op.prefix);
      return { request_delete_range: { key: start, range_end: end } };
    }
  }
}

// ---- fault handling: no breaker (a call after etcd's return goes through at once), a retry on the
// next host for multi-endpoint clusters, a capped watch reconnect backoff --------------------------

const noEvent = () => ({ dispose() {} });

const passThrough: Policy = {
  _altReturn: undefined as never,
  onSuccess: noEvent,
  onFailure: noEvent,
  execute: async (fn, signal) => fn({ signal: signal ?? new AbortController().signal }),
};

function retryOnOtherHosts(attempts: number): Policy {
  return {
    ...passThrough,
    async execute(fn, signal) {
      for (let i = 1; ; i++) {
        try {
          return await fn({ signal: signal ?? new AbortController().signal });
        } catch (err) {
          if (i >= attempts || !(err instanceof Error) || !isRecoverableError(err)) throw err;
        }
      }
    },
  };
}

function cappedBackoff(ms: number, maxMs: number): Backoff {
  return { duration: ms, next: () => cappedBackoff(Math.min(ms * 2, maxMs), maxMs) };
}

function defaultOnError(err: unknown): void {
  process.emitWarning(err instanceof Error ? err : String(err), { code: "SVC_STORE" });
}
