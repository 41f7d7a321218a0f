// Cluster membership on the store: each running node registers `nodes/<node>` under a lease
// (cluster.etcd.node_ttl) with its inter-node address and version, and watches the prefix to know
// the others. Every node that ever joined is also recorded without a lease (`members/<node>`), so
// `cluster status` lists stopped nodes too. A lost lease (etcd unreachable for longer than the
// TTL) is re-granted and the registration rewritten when the store answers again.

import type { Logger } from "../telemetry/logger.ts";
import type { ClusterKeys } from "./keys.ts";
import { decodeSegment } from "./keys.ts";
import type { ClusterStore, Lease, WatchHandle } from "./store.ts";
import { decodeJson, encodeJson } from "./store-json.ts";

export interface NodeRecord {
  node: string;
  /** Inter-node link address, `host:port`. */
  address: string;
  version: string;
  startedAt: number;
  /** The node's MQTT (TCP) address, `host:port`, once its listeners are up (server references). */
  mqtt?: string;
  /** Set while the node drains: clients are not sent there. */
  draining?: boolean;
}

export interface MembershipEvents {
  up(rec: NodeRecord): void;
  down(node: string): void;
  /** The node's own lease was re-granted: leased keys (routes, clients) must be written again. */
  reregistered(lease: Lease): void;
  /** Another node deleted this node's registration (it left the discovery source's view). */
  selfRemoved?(): void;
}

export class Membership {
  private readonly running = new Map<string, NodeRecord>();
  private watch: WatchHandle | null = null;
  private leaseNow: Lease | null = null;
  private stopped = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly store: ClusterStore,
    private readonly keys: ClusterKeys,
    private self: NodeRecord,
    private readonly ttlMs: number,
    private readonly events: MembershipEvents,
    private readonly logger: Logger,
  ) {}

  get lease(): Lease | null {
    return this.leaseNow;
  }

  async start(): Promise<void> {
    await this.register();
    const { entries, revision } = await this.store.range(this.keys.nodes());
    for (const e of entries) this.apply(decodeSegment(e.key.slice(this.keys.nodes().length)), e.value);
    this.watch = await this.store.watch(
      this.keys.nodes(),
      (ev) => {
        const node = decodeSegment(ev.key.slice(this.keys.nodes().length));
        if (ev.type === "put") this.apply(node, ev.value);
        else if (node === this.self.node) {
          this.running.delete(node);
          if (!this.stopped && this.leaseNow !== null) {
            this.logger.warn({}, "this node's cluster registration was removed by another node");
            this.events.selfRemoved?.();
          }
        } else if (this.running.delete(node)) {
          this.logger.warn({ peer: node }, "cluster node down");
          this.events.down(node);
        }
      },
      { fromRevision: revision + 1 },
    );
  }

  private apply(node: string, value: Buffer): void {
    const rec = decodeJson<NodeRecord>(value);
    const known = this.running.get(node);
    this.running.set(node, rec);
    if (node === this.self.node) return;
    if (known === undefined || known.address !== rec.address || known.startedAt !== rec.startedAt) {
      this.logger.info({ peer: node, address: rec.address }, "cluster node up");
      this.events.up(rec);
    }
  }

  private async register(): Promise<void> {
    const lease = await this.store.grantLease(this.ttlMs);
    lease.onLost((err) => this.leaseLost(err));
    await this.store.put(this.keys.node(this.self.node), encodeJson(this.self), { lease });
    await this.store.put(`${this.keys.root}members/${encodeURIComponent(this.self.node)}`, encodeJson(this.self));
    this.leaseNow = lease;
  }

  private leaseLost(err: Error): void {
    if (this.stopped) return;
    this.logger.warn({ err: err.message }, "cluster lease lost; re-registering when the store answers");
    this.leaseNow = null;
    const attempt = () => {
      if (this.stopped) return;
      this.register().then(
        () => {
          this.logger.info({}, "cluster registration restored");
          if (this.leaseNow !== null) this.events.reregistered(this.leaseNow);
        },
        () => {
          this.retry = setTimeout(attempt, 500);
          this.retry.unref();
        },
      );
    };
    attempt();
  }

  /** Changes this node's registration (same lease). */
  async update(patch: Partial<NodeRecord>): Promise<void> {
    this.self = { ...this.self, ...patch };
    await this.reput();
  }

  /** Writes this node's registration again under its lease (after another node removed it). */
  async reput(): Promise<void> {
    const lease = this.leaseNow;
    if (lease === null || this.stopped) return;
    await this.store.put(this.keys.node(this.self.node), encodeJson(this.self), { lease });
  }

  /**
   * Removes another node's registration, if it is still the one that started at `startedAt`:
   * every node then sees it down (its link peer and routes go) without waiting for its lease.
   */
  async remove(node: string, startedAt: number): Promise<boolean> {
    const key = this.keys.node(node);
    const e = await this.store.get(key);
    if (e === undefined || decodeJson<NodeRecord>(e.value).startedAt !== startedAt) return false;
    return this.store.txn({
      compare: [{ key, target: "mod", op: "==", value: e.modRevision }],
      success: [{ type: "delete", key }],
    });
  }

  record(node: string): NodeRecord | undefined {
    return this.running.get(node);
  }

  /** Running nodes, this one included. */
  runningNodes(): NodeRecord[] {
    return [...this.running.values()].sort((a, b) => a.node.localeCompare(b.node));
  }

  isRunning(node: string): boolean {
    return this.running.has(node);
  }

  /** Nodes that joined once and are not running now. */
  async stoppedNodes(): Promise<string[]> {
    const { entries } = await this.store.range(`${this.keys.root}members/`);
    return entries
      .map((e) => decodeJson<NodeRecord>(e.value).node)
      .filter((n) => !this.running.has(n))
      .sort();
  }

  /** Forgets a stopped node (`cluster force-leave`). */
  async forget(node: string): Promise<void> {
    await this.store.delete(`${this.keys.root}members/${encodeURIComponent(node)}`);
  }

  /** Deregisters (revokes the lease: routes and client registrations go with it). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry !== undefined) clearTimeout(this.retry);
    await this.watch?.close();
    await this.leaseNow?.revoke().catch(() => {});
    this.leaseNow = null;
  }
}
