// Route sync: a filter's first local subscriber writes `routes/<filter>/<node>` under this node's
// lease, its last one deletes it. Changes are coalesced per filter and written in one transaction
// per tick, so a subscribe storm is a handful of store writes; writes are idempotent, and when the
// store is unreachable they stay pending and are retried (a re-granted lease rewrites them all).
// A watch on `routes/` keeps the cluster route table (RemoteRoutes) of every node current.

import type { RouteListener } from "../broker/router/router.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { ClusterKeys } from "./keys.ts";
import type { RemoteRoutes } from "./remote-routes.ts";
import type { ClusterStore, Lease, TxnOp, WatchHandle } from "./store.ts";

const EMPTY = Buffer.alloc(0);

export class RouteSync implements RouteListener {
  private readonly pending = new Map<string, boolean>();
  private readonly local = new Set<string>();
  private scheduled = false;
  private flushing = false;
  private watch: WatchHandle | null = null;
  private sharedWatch: WatchHandle | null = null;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(
    private readonly store: ClusterStore,
    private readonly keys: ClusterKeys,
    private readonly node: string,
    private readonly remote: RemoteRoutes,
    private lease: () => Lease | null,
    private readonly logger: Logger,
  ) {}

  async start(): Promise<void> {
    const { entries, revision } = await this.store.range(this.keys.routes());
    for (const e of entries) {
      const r = this.keys.parseRoute(e.key);
      if (r !== undefined) this.remote.add(r.filter, r.node);
    }
    this.watch = await this.store.watch(
      this.keys.routes(),
      (ev) => {
        const r = this.keys.parseRoute(ev.key);
        if (r === undefined) return;
        if (ev.type === "put") this.remote.add(r.filter, r.node);
        else this.remote.remove(r.filter, r.node);
      },
      { fromRevision: revision + 1 },
    );
    const shared = await this.store.range(this.keys.sharedRoutes());
    for (const e of shared.entries) {
      const r = this.keys.parseSharedRoute(e.key);
      if (r !== undefined) this.remote.addShared(r.filter, r.group, r.node);
    }
    this.sharedWatch = await this.store.watch(
      this.keys.sharedRoutes(),
      (ev) => {
        const r = this.keys.parseSharedRoute(ev.key);
        if (r === undefined) return;
        if (ev.type === "put") this.remote.addShared(r.filter, r.group, r.node);
        else this.remote.removeShared(r.filter, r.group, r.node);
      },
      { fromRevision: shared.revision + 1 },
    );
  }

  routeAdded(filter: string): void {
    this.change(this.keys.route(filter, this.node), true);
  }

  routeRemoved(filter: string): void {
    this.change(this.keys.route(filter, this.node), false);
  }

  sharedAdded(filter: string, group: string): void {
    this.change(this.keys.sharedRoute(group, filter, this.node), true);
  }

  sharedRemoved(filter: string, group: string): void {
    this.change(this.keys.sharedRoute(group, filter, this.node), false);
  }

  /** Pending changes are keyed by store key: the last change of a key wins. */
  private change(key: string, add: boolean): void {
    if (add) this.local.add(key);
    else this.local.delete(key);
    this.pending.set(key, add);
    this.schedule();
  }

  /** The lease was re-granted: every local route is written again. */
  rewriteAll(): void {
    for (const f of this.local) this.pending.set(f, true);
    this.schedule();
  }

  private schedule(): void {
    if (this.scheduled || this.stopped) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Writes pending changes; resolves when the store has them (tests and shutdown wait on it). */
  async flush(): Promise<void> {
    if (this.flushing || this.pending.size === 0) return;
    const lease = this.lease();
    if (lease === null) return this.retryLater();
    this.flushing = true;
    const batch = [...this.pending];
    this.pending.clear();
    const ops: TxnOp[] = batch.map(([key, add]) =>
      add ? { type: "put", key, value: EMPTY, lease } : { type: "delete", key },
    );
    try {
      for (let i = 0; i < ops.length; i += 128) await this.store.txn({ compare: [], success: ops.slice(i, i + 128) });
    } catch (err) {
      // Put back what is not superseded by a newer change, and try again later.
      for (const [filter, add] of batch) if (!this.pending.has(filter)) this.pending.set(filter, add);
      this.logger.warn({ err: (err as Error).message, pending: this.pending.size }, "route sync deferred");
      this.retryLater();
    } finally {
      this.flushing = false;
    }
    if (this.pending.size > 0 && this.retry === undefined) this.schedule();
  }

  private retryLater(): void {
    if (this.retry !== undefined || this.stopped) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.flush();
    }, 500);
    this.retry.unref();
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    await this.watch?.close();
    await this.sharedWatch?.close();
  }
}
