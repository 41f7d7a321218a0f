// A node's membership in an etcd-backed cluster, and the broker's ClusterPort: registers the node,
// keeps the cluster route table, forwards each published message once to every other node with a
// matching route (the receiver delivers locally only: broker.dispatch), replicates retained
// messages to every node so a subscriber anywhere gets them, and answers other nodes' calls.

import { createHmac } from "node:crypto";
import type { Broker } from "../broker/broker.ts";
import { M } from "../broker/metrics.ts";
import type { AckHolder, ClusterPort, SessionTransfer } from "../broker/ports.ts";
import type { Message } from "../broker/types.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { ClusterSettings } from "./join.ts";
import type { ClusterKeys } from "./keys.ts";
import { NodeLink } from "./link/node-link.ts";
import { Membership, type NodeRecord } from "./membership.ts";
import { fromWire, toWire, type WireMessage } from "./message-wire.ts";
import { type DiscoveredPeer, DiscoveredPeers, type PeerSource } from "./peer-discovery.ts";
import { RemoteRoutes } from "./remote-routes.ts";
import { RoutePins } from "./route-pins.ts";
import { RouteSync } from "./route-sync.ts";
import { SessionHandover } from "./session-handover.ts";
import type { ClusterStore } from "./store.ts";

/** What the cluster needs from the retainer, so retained messages are cluster-wide. */
export interface RetainedReplica {
  /** Stores a retained message published on another node (no hooks, no routing). */
  storeReplica(msg: Message): void;
  /** Every retained message of this node (a joining node fetches them). */
  all(): Message[];
}

export interface ClusterNodeOptions {
  broker: Broker;
  store: ClusterStore;
  keys: ClusterKeys;
  nodeName: string;
  cookie: string;
  /** Where the inter-node link listens; the advertised host is the node name's host part. */
  bind: { host: string; port: number };
  /** What a joining node needs to run in this cluster (answered to `cluster.settings` calls). */
  settings?: ClusterSettings;
  /** TLS for the inter-node link (rpc.tls.*); plain TCP when absent. */
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer };
  ttlMs: number;
  version: string;
  retained: RetainedReplica;
  logger: Logger;
  /**
   * Where peers are (cluster.discovery = k8s: the headless Service's EndpointSlices): the link
   * dials them there, and a registered node that left it is taken out of the cluster at once.
   */
  peers?: PeerSource;
}

/** Raises and clears the node's alarms (the store becoming unreachable). */
export interface ClusterAlarms {
  activate(name: string, desc: string, details?: Record<string, unknown>): boolean;
  deactivate(name: string): boolean;
}

/** The node may not join: another cookie, for example. */
export class ClusterJoinError extends Error {
  override name = "ClusterJoinError";
}

const STORE_ALARM = "cluster_store_unavailable";
/** Link queue depths (messages) where publishers' acks start and stop being held. */
const LINK_HIGH_WATER = 2000;
const LINK_LOW_WATER = 500;

/** Remote procedure handlers other nodes may call, by method name. */
export type CallHandler = (from: string, args: unknown) => Promise<unknown> | unknown;

export class ClusterNode implements ClusterPort {
  readonly link: NodeLink;
  readonly routes: RemoteRoutes;
  private membership: Membership | null = null;
  private routeSync: RouteSync | null = null;
  private pins: RoutePins | null = null;
  private readonly handlers = new Map<string, CallHandler>();
  private readonly peersUp = new Set<string>();
  private readonly sessions: SessionHandover;
  private discovered: DiscoveredPeers | null = null;
  private health: NodeJS.Timeout | undefined;
  private alarms: ClusterAlarms | null = null;
  private busyReport: ((node: string, bytes: number) => void) | null = null;
  private busyBytes = 0;

  constructor(private readonly o: ClusterNodeOptions) {
    this.routes = new RemoteRoutes(o.nodeName);
    this.link = new NodeLink({
      nodeName: o.nodeName,
      cookie: o.cookie,
      bind: o.bind,
      tls: o.tls,
      logger: o.logger,
      onForward: (from, msgs) => this.onForward(from, msgs),
      onCall: (from, method, args) => this.onCall(from, method, args),
      onPeer: (node, up) => o.logger.debug({ peer: node, up }, "cluster link"),
    });
    this.handle("retained.all", () => o.retained.all().map(toWire));
    // A no-op: its reply proves the caller's earlier frames were processed (calls and forwards
    // travel in order), see syncPeers.
    this.handle("cluster.sync", () => null);
    this.handle("cluster.settings", () => {
      if (o.settings === undefined) throw new Error("this node cannot share its cluster settings");
      return o.settings;
    });
    this.sessions = new SessionHandover({
      broker: o.broker,
      store: o.store,
      keys: o.keys,
      nodeName: o.nodeName,
      link: this.link,
      routes: this.routes,
      logger: o.logger,
      handle: (method, fn) => this.handle(method, fn),
      isRunning: (node) => this.membership?.isRunning(node) ?? false,
      lease: () => this.membership?.lease ?? null,
      pin: (filters) => this.pins?.pin(filters),
      unpin: (filters) => this.pins?.unpin(filters),
    });
  }

  /** Reports a link whose write buffer stays over `thresholdBytes` (sysmon busy_dist_port). */
  useSysmon(report: (node: string, bufferedBytes: number) => void, thresholdBytes: number): void {
    this.busyReport = report;
    this.busyBytes = thresholdBytes;
  }

  /** Where the store-unreachable alarm goes (the node's alarms, once they exist). */
  useAlarms(a: ClusterAlarms): void {
    this.alarms = a;
  }

  /** Registers a call handler (cluster-wide services add theirs). */
  handle(method: string, fn: CallHandler): void {
    this.handlers.set(method, fn);
  }

  async start(): Promise<void> {
    const o = this.o;
    await this.checkCookie();
    await this.link.start();
    const host = o.nodeName.slice(o.nodeName.indexOf("@") + 1);
    const self: NodeRecord = {
      node: o.nodeName,
      address: `${host}:${this.link.port}`,
      version: o.version,
      startedAt: Date.now(),
    };
    this.membership = new Membership(
      o.store,
      o.keys,
      self,
      o.ttlMs,
      {
        up: (rec) => this.peerUp(rec),
        down: (node) => this.peerDown(node),
        reregistered: () => {
          this.routeSync?.rewriteAll();
          this.sessions.reregister();
        },
        selfRemoved: () => {
          if (this.discovered !== null) this.discovered.selfRemoved();
          else void this.membership?.reput().catch(() => {});
        },
      },
      o.logger,
    );
    const membership = this.membership;
    if (o.peers !== undefined) {
      this.discovered = new DiscoveredPeers({
        source: o.peers,
        self: o.nodeName,
        membership,
        dial: (node, address) => this.link.addPeer(node, address),
        logger: o.logger,
      });
    }
    await this.membership.start();
    this.routeSync = new RouteSync(
      o.store,
      o.keys,
      o.nodeName,
      this.routes,
      () => this.membership?.lease ?? null,
      o.logger,
    );
    await this.routeSync.start();
    this.pins = new RoutePins(this.routeSync);
    o.broker.router.addListener(this.pins);
    o.broker.router.sharedGate = this.gate;
    await this.sessions.start();
    await this.discovered?.start();
    for (const f of o.broker.router.filters()) this.pins.routeAdded(f);
    o.broker.cluster = this;
    this.health = setInterval(() => void this.probeStore(), Math.min(2000, Math.max(250, o.ttlMs / 2)));
    this.health.unref();
  }

  /**
   * The first node of a cluster records a digest of its cookie; every later node must match it,
   * or it does not join and says why. The cookie itself never goes to the store.
   */
  private async checkCookie(): Promise<void> {
    const o = this.o;
    const key = `${o.keys.root}cookie`;
    const digest = createHmac("sha256", o.cookie).update(`svc-cluster:${o.keys.root}`).digest("hex");
    const created = await o.store.txn({
      compare: [{ key, target: "version", op: "==", value: 0 }],
      success: [{ type: "put", key, value: Buffer.from(digest) }],
    });
    if (created) return;
    const found = (await o.store.get(key))?.value.toString();
    if (found !== digest) {
      throw new ClusterJoinError(
        `node ${o.nodeName} cannot join cluster ${o.keys.root}: its node.cookie differs from the cluster's`,
      );
    }
  }

  /** Raises an alarm while the store does not answer, clears it when it does again. */
  private async probeStore(): Promise<void> {
    const o = this.o;
    if (this.busyReport !== null && this.busyBytes > 0) {
      for (const node of this.peersUp) {
        const b = this.link.bufferedBytes(node);
        if (b > this.busyBytes) this.busyReport(node, b);
      }
    }
    try {
      await o.store.get(o.keys.node(o.nodeName));
      if (this.alarms?.deactivate(STORE_ALARM)) o.logger.info({}, "cluster store reachable again");
    } catch (err) {
      this.alarms?.activate(STORE_ALARM, "The cluster store (etcd) does not answer; serving from cached tables", {
        error: (err as Error).message,
      });
    }
  }

  private peerUp(rec: NodeRecord): void {
    this.link.addPeer(rec.node, this.discovered?.addressOf(rec) ?? rec.address);
    this.discovered?.registered(rec.node);
    if (this.peersUp.has(rec.node)) return;
    this.peersUp.add(rec.node);
    // Catch up on the retained messages the cluster already holds.
    this.link.call(rec.node, "retained.all", null, 30_000).then(
      (list) => {
        for (const w of list as WireMessage[]) this.o.retained.storeReplica(fromWire(w));
      },
      (err: unknown) => this.o.logger.warn({ peer: rec.node, err: (err as Error).message }, "retained catch-up failed"),
    );
  }

  private peerDown(node: string): void {
    this.peersUp.delete(node);
    this.routes.removeNode(node);
    this.link.removePeer(node);
  }

  // ---- sessions: one owner per client id in the cluster (session-handover.ts) ---------------

  /** ClusterPort: makes this node the owner of the client id's session, moving it here. */
  claimSession(clientId: string, cleanStart: boolean): Promise<SessionTransfer | null> {
    return this.sessions.claim(clientId, cleanStart);
  }

  // ---- shared subscriptions across the cluster ---------------------------------------------
  //
  // One member in the whole cluster gets each message of a shared group. The publishing node
  // decides, per (filter, group), which node serves it: itself (the router's gate answers yes) or
  // another node, which then receives the message with the groups it must serve in its headers.
  // A node dispatching a forwarded message serves exactly those groups and no others.

  /** Decisions for the message being published now: node -> `group\u0000filter` keys it serves. */
  private readonly sharedFor = new Map<string, string[]>();
  private sharedSeq = -1;
  private readonly decided = new Set<string>();
  /** The forwarded message being dispatched here (its groups are in its headers). */
  private remoteMsg: Message | null = null;
  private readonly rr = new Map<string, number>();
  private readonly sticky = new Map<string, string>();

  private readonly gate = (msg: Message, filter: string, group: string): boolean => {
    const key = `${group}\u0000${filter}`;
    if (this.remoteMsg === msg) {
      const served = (msg.headers?.sharedFor as string[] | undefined) ?? [];
      return served.includes(key);
    }
    this.beginShared(msg);
    this.decided.add(key);
    const others = this.routes.sharedNodes(filter, group);
    if (others === undefined || others.size === 0) return true;
    const pick = this.pickNode(msg, key, [this.o.nodeName, ...others]);
    if (pick === this.o.nodeName) return true;
    this.assign(pick, key);
    return false;
  };

  private beginShared(msg: Message): void {
    if (this.sharedSeq === msg.seq) return;
    this.sharedSeq = msg.seq;
    // Most messages meet no shared group: nothing to reset then (a clear allocates a new table).
    if (this.sharedFor.size > 0) this.sharedFor.clear();
    if (this.decided.size > 0) this.decided.clear();
  }

  private assign(node: string, key: string): void {
    let list = this.sharedFor.get(node);
    if (list === undefined) {
      list = [];
      this.sharedFor.set(node, list);
    }
    list.push(key);
  }

  /** The broker's shared-subscription strategy, applied to nodes. */
  private pickNode(msg: Message, key: string, nodes: string[]): string {
    nodes.sort();
    switch (this.o.broker.settings.sharedStrategy) {
      case "round_robin": {
        const i = (this.rr.get(key) ?? -1) + 1;
        this.rr.set(key, i);
        return nodes[i % nodes.length];
      }
      case "sticky": {
        const last = this.sticky.get(key);
        if (last !== undefined && nodes.includes(last)) return last;
        const n = nodes[Math.floor(Math.random() * nodes.length)];
        this.sticky.set(key, n);
        return n;
      }
      case "hash": {
        let h = 0x811c9dc5;
        const s = msg.from === "" ? msg.topic : msg.from;
        for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 0x01000193);
        return nodes[(h >>> 0) % nodes.length];
      }
      default:
        return nodes[Math.floor(Math.random() * nodes.length)];
    }
  }

  /** The message forward() is sending, and to how many nodes so far (no closures per message). */
  private fwdMsg: Message | null = null;
  private fwdCount = 0;

  /** ClusterPort: sends `msg` once to each other node with a matching route (retained: to all). */
  forward(msg: Message): number {
    this.beginShared(msg);
    const outer = this.fwdMsg;
    const outerCount = this.fwdCount;
    this.fwdMsg = msg;
    this.fwdCount = 0;
    let n: number;
    try {
      // Groups that have members on other nodes only: the router never saw them here.
      this.routes.matchShared(msg.topic, this.decideShared);
      if (msg.retain) {
        for (const node of this.peersUp) this.sendTo(node);
      } else {
        this.routes.match(msg.topic, this.sendTo);
      }
      // Nodes that only serve a shared group (no plain route for this topic).
      if (this.sharedFor.size > 0) for (const node of [...this.sharedFor.keys()]) this.sendTo(node);
      n = this.fwdCount;
    } finally {
      this.fwdMsg = outer;
      this.fwdCount = outerCount;
    }
    this.sessions.observe(msg, null);
    if (n > 0) this.o.broker.metrics.add(M.messagesForward, n);
    return n;
  }

  /** forward(): a shared group with members on other nodes only, decided once per message. */
  private readonly decideShared = (filter: string, group: string, nodes: Iterable<string>): void => {
    const key = `${group}\u0000${filter}`;
    if (this.decided.has(key)) return;
    this.decided.add(key);
    this.assign(this.pickNode(this.fwdMsg as Message, key, [...nodes]), key);
  };

  /** forward(): the message to one node, with the shared groups it serves. */
  private readonly sendTo = (node: string): void => {
    const msg = this.fwdMsg as Message;
    const served = this.sharedFor.get(node);
    let out = msg;
    if (served !== undefined) {
      out = { ...msg, headers: { ...msg.headers, sharedFor: served } };
      this.sharedFor.delete(node);
    }
    // A traced message goes out with a forward span's context in its headers.
    const tracing = msg.headers === undefined ? null : this.o.broker.tracing;
    if (tracing !== null) out = tracing.forward(out, node);
    if (this.link.forward(node, out)) {
      this.fwdCount++;
      if (this.link.queuedMessages(node) > LINK_HIGH_WATER) this.congestedLink(node);
    } else if (msg.qos > 0) {
      this.o.logger.warn({ peer: node, topic: msg.topic }, "link queue full: QoS 1/2 message dropped");
    }
  };

  // ---- back-pressure across nodes ------------------------------------------------------------
  //
  // A node accepts publishes faster than another node may take them. While the link queue to a
  // node is over LINK_HIGH_WATER, the publishers whose messages go to it are held back
  // (broker.congested): the acknowledgements of QoS 1/2 publishes wait, as for a congested local
  // subscriber, and a QoS 0 publisher's connection stops reading (as the family suspends a
  // publisher on a busy distribution port), so publishers slow to the link's pace instead of
  // overflowing its queue (QoS 0 dropped) and spending this node's CPU on messages it cannot
  // forward; released below the low mark.

  private readonly holders = new Map<string, (() => void)[]>();
  private readonly pausedPeers = new Set<string>();
  private holdTimer: NodeJS.Timeout | undefined;

  private congestedLink(node: string): void {
    let held = this.holders.get(node);
    if (held === undefined) {
      held = [];
      this.holders.set(node, held);
    }
    const list = held;
    this.o.broker.congested = {
      holdAck: (release) => {
        list.push(release);
        this.holdTimer ??= setInterval(() => this.releaseHeld(), 2);
      },
    };
  }

  /** Publishes held back by congested links right now (QoS 1/2 acknowledgements, QoS 0 readers). */
  heldPublishers(): number {
    let n = 0;
    for (const list of this.holders.values()) n += list.length;
    return n;
  }

  private releaseHeld(): void {
    for (const [node, list] of this.holders) {
      if (this.link.queuedMessages(node) > LINK_LOW_WATER && this.membership?.isRunning(node)) continue;
      this.holders.delete(node);
      for (const f of list) f();
    }
    if (this.holders.size === 0 && this.holdTimer !== undefined) {
      clearInterval(this.holdTimer);
      this.holdTimer = undefined;
    }
  }

  private onForward(from: string, msgs: Message[]): void {
    const b = this.o.broker;
    let congested: AckHolder | null = null;
    for (const m of msgs) {
      if (this.sessions.targeted(m)) continue;
      if (m.retain) this.o.retained.storeReplica(m);
      this.remoteMsg = m;
      b.congested = null;
      try {
        b.dispatch(m);
      } finally {
        this.remoteMsg = null;
      }
      const c = b.congested as AckHolder | null; // set by dispatch() when a session fell behind
      if (c !== null && m.qos > 0) congested = c;
      this.sessions.observe(m, from);
    }
    b.congested = null;
    if (congested !== null && !this.pausedPeers.has(from)) {
      // A local subscriber fell behind: stop reading this node's link until it catches up, so the
      // sender's link queue fills and holds its publishers' acks (end-to-end back-pressure).
      this.pausedPeers.add(from);
      this.link.pausePeer(from);
      congested.holdAck(() => {
        this.pausedPeers.delete(from);
        this.link.resumePeer(from);
      });
    }
  }

  private async onCall(from: string, method: string, args: unknown): Promise<unknown> {
    const h = this.handlers.get(method);
    if (h === undefined) throw new Error(`unknown cluster call ${method}`);
    return h(from, args);
  }

  /** Calls `method` on `node`. */
  call(node: string, method: string, args: unknown, timeoutMs?: number): Promise<unknown> {
    return this.link.call(node, method, args, timeoutMs);
  }

  runningNodes(): NodeRecord[] {
    return this.membership?.runningNodes() ?? [];
  }

  stoppedNodes(): Promise<string[]> {
    return this.membership?.stoppedNodes() ?? Promise.resolve([]);
  }

  /** Forgets a stopped node (`cluster force-leave`). */
  forget(node: string): Promise<void> {
    return this.membership?.forget(node) ?? Promise.resolve();
  }

  /** Waits until pending route writes reached the store (tests, drain). */
  async flushRoutes(): Promise<void> {
    await this.routeSync?.flush();
  }

  /** Adds to this node's registration what clients and peers should know (MQTT address, draining). */
  advertise(patch: Pick<NodeRecord, "mqtt" | "draining">): Promise<void> {
    return this.membership?.update(patch) ?? Promise.resolve();
  }

  /** The peers the discovery source reports (k8s: pods of the headless Service), if any. */
  discoveredPeers(): DiscoveredPeer[] {
    return this.discovered?.peers() ?? [];
  }

  /**
   * Running peers clients may move to: advertised MQTT address, not draining, and (with a
   * discovery source) ready and not terminating there.
   */
  servingPeers(): NodeRecord[] {
    return this.runningNodes().filter(
      (r) =>
        r.node !== this.o.nodeName &&
        r.mqtt !== undefined &&
        r.draining !== true &&
        (this.discovered?.serving(r.node) ?? true),
    );
  }

  /** Moved sessions whose new owner has not confirmed yet, and messages or bytes queued to peers. */
  handoverBacklog(): number {
    let n = this.sessions.unconfirmed;
    for (const node of this.peersUp) n += this.link.queuedMessages(node) + this.link.bufferedBytes(node);
    return n;
  }

  /** Resolves once every peer has processed what this node sent it so far (or failed to answer). */
  async syncPeers(timeoutMs = 2000): Promise<void> {
    await Promise.all(
      [...this.peersUp].map((node) => this.link.call(node, "cluster.sync", null, timeoutMs).catch(() => {})),
    );
  }

  async stop(): Promise<void> {
    if (this.health !== undefined) clearInterval(this.health);
    if (this.holdTimer !== undefined) clearInterval(this.holdTimer);
    for (const list of this.holders.values()) for (const f of list) f();
    this.holders.clear();
    this.o.broker.cluster = { forward: () => 0 };
    this.o.broker.router.sharedGate = null;
    await this.routeSync?.flush().catch(() => {});
    await this.routeSync?.stop();
    await this.sessions.stop();
    await this.discovered?.stop();
    this.o.broker.hooks.removeOwner("svc_cluster");
    await this.membership?.stop();
    await this.link.stop();
  }
}
