// Peers from a discovery source (cluster.discovery = k8s: the pods of the headless Service, from
// its EndpointSlices), joined with the etcd membership. etcd stays the one source of truth of who
// is in the cluster; the source adds two things:
// - where a peer is: the link dials the address the source gives (the pod IP) with the link port
//   of the peer's registration, so the cluster does not depend on DNS records of pods;
// - when a peer is gone: a node still registered in etcd but no longer listed by the source (its
//   pod was deleted) has its registration removed at once, so every node drops its link peer and
//   routes, and its client ids can be claimed, without waiting for its lease to expire.
// Removals are made only while the source is in sync and lists this node itself (proof that node
// names and the source agree); a node registered while absent from the source gets `graceMs`.

import type { Logger } from "../telemetry/logger.ts";
import type { Membership } from "./membership.ts";

export interface DiscoveredPeer {
  /** Node name derived from the source (k8s: cluster.k8s.address_type). */
  node: string;
  /** Host (pod IP or name) the node is reached at. */
  address: string;
  /** Ready (k8s: the pod passes its readiness probe). Not-ready pods are listed too. */
  ready: boolean;
  /** Shutting down (k8s: the pod is terminating). */
  terminating: boolean;
}

export interface PeerView {
  peers: ReadonlyMap<string, DiscoveredPeer>;
  /** The view is complete and current (listed, and the watch is running). */
  synced: boolean;
}

export interface PeerSource {
  /** Starts watching (does not wait for the first answer); `onChange` gets every new view. */
  start(onChange: (view: PeerView) => void): void;
  stop(): Promise<void>;
}

export interface DiscoveredPeersOptions {
  source: PeerSource;
  self: string;
  membership: Membership;
  /** Points the link at a peer's address (idempotent). */
  dial(node: string, address: string): void;
  logger: Logger;
  /** How long a node may be registered without being listed before it is removed (default 10 s). */
  graceMs?: number;
}

export class DiscoveredPeers {
  private view: PeerView = { peers: new Map(), synced: false };
  /** Last time each node was listed. */
  private readonly presentAt = new Map<string, number>();
  /** When this node learned of each registration (`node\0startedAt`). */
  private readonly registeredAt = new Map<string, number>();
  private readonly removed = new Set<string>();
  private readonly announced = new Set<string>();
  private selfListed = false;
  private selfWarned = false;
  private reputPending = false;
  private timer: NodeJS.Timeout | undefined;
  private readonly graceMs: number;

  constructor(private readonly o: DiscoveredPeersOptions) {
    this.graceMs = o.graceMs ?? 10_000;
  }

  async start(): Promise<void> {
    this.o.source.start((v) => this.onView(v));
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.o.source.stop();
  }

  peers(): DiscoveredPeer[] {
    return [...this.view.peers.values()].sort((a, b) => a.node.localeCompare(b.node));
  }

  /** The link address of a registered peer: the source's host with the registered port. */
  addressOf(rec: { node: string; address: string }): string | undefined {
    const p = this.view.peers.get(rec.node);
    if (p === undefined) return undefined;
    const port = rec.address.slice(rec.address.lastIndexOf(":") + 1);
    return `${p.address.includes(":") ? `[${p.address}]` : p.address}:${port}`;
  }

  /** May clients be sent to `node`? Unknown while the view is not in sync. */
  serving(node: string): boolean {
    if (!this.view.synced) return true;
    const p = this.view.peers.get(node);
    return p?.ready === true && !p.terminating;
  }

  /** Membership saw `node` register (or change its record). */
  registered(node: string): void {
    const rec = this.o.membership.record(node);
    if (rec === undefined) return;
    const key = `${node}\0${rec.startedAt}`;
    const now = Date.now();
    if (!this.registeredAt.has(key)) this.registeredAt.set(key, now);
    if (this.view.peers.has(node)) this.presentAt.set(node, now);
    this.enforce();
  }

  /** Another node removed this node's registration: written again once the source lists it. */
  selfRemoved(): void {
    if (!this.view.synced || this.view.peers.has(this.o.self)) void this.o.membership.reput().catch(() => {});
    else this.reputPending = true;
  }

  private onView(v: PeerView): void {
    this.view = v;
    const now = Date.now();
    for (const node of v.peers.keys()) this.presentAt.set(node, now);
    if (!v.synced) return;
    this.selfListed = v.peers.has(this.o.self);
    if (!this.selfListed && !this.selfWarned) {
      this.selfWarned = true;
      this.o.logger.error(
        { node: this.o.self, listed: [...v.peers.keys()] },
        "this node's name is not among the peers discovered: check node.name and cluster.k8s.address_type; peers are not removed by discovery until it is",
      );
    }
    if (this.selfListed && this.reputPending) {
      this.reputPending = false;
      void this.o.membership.reput().catch(() => {});
    }
    for (const p of v.peers.values()) {
      if (p.node === this.o.self) continue;
      const rec = this.o.membership.record(p.node);
      if (rec !== undefined) {
        const address = this.addressOf(rec);
        if (address !== undefined) this.o.dial(p.node, address);
      } else if (!this.announced.has(p.node)) {
        this.announced.add(p.node);
        this.o.logger.info(
          { peer: p.node, address: p.address, ready: p.ready },
          "peer discovered, not registered in the cluster yet",
        );
      }
    }
    this.enforce();
  }

  /** Removes the registrations of nodes the source no longer lists. */
  private enforce(): void {
    if (!this.view.synced || !this.selfListed) return;
    const now = Date.now();
    let recheck = Number.POSITIVE_INFINITY;
    for (const rec of this.o.membership.runningNodes()) {
      if (rec.node === this.o.self || this.view.peers.has(rec.node)) continue;
      const key = `${rec.node}\0${rec.startedAt}`;
      if (this.removed.has(key)) continue;
      const since = this.registeredAt.get(key) ?? now;
      if (!this.registeredAt.has(key)) this.registeredAt.set(key, now);
      const seen = this.presentAt.get(rec.node);
      // Listed while registered, then no longer: its pod is gone. Never listed: wait the grace.
      const left = seen !== undefined && seen >= since;
      if (!left && now - since < this.graceMs) {
        recheck = Math.min(recheck, since + this.graceMs - now);
        continue;
      }
      this.removed.add(key);
      this.o.logger.warn(
        { peer: rec.node },
        left
          ? "peer left the discovered set: removing it from the cluster"
          : "registered peer never discovered: removing it from the cluster",
      );
      this.o.membership.remove(rec.node, rec.startedAt).catch((err: unknown) => {
        this.removed.delete(key);
        this.o.logger.warn({ peer: rec.node, err: (err as Error).message }, "could not remove a departed peer");
      });
    }
    if (recheck !== Number.POSITIVE_INFINITY) {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = setTimeout(() => this.enforce(), recheck + 10);
      this.timer.unref();
    }
  }
}
