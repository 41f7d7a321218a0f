// One owner per client id in the cluster, and sessions moving between nodes without losing
// messages. `clients/<clientid>` names the node holding a session (under its lease). A CONNECT
// first claims it: the owning node closes its connection and hands over subscriptions and owed
// messages (`session.takeover`), then the claimer takes ownership with a compare-and-swap.
//
// The gap of a move: between the old owner giving the session away and the new one restoring it,
// messages are still routed by tables that have not caught up. Two things close it:
// - the old owner keeps the session's routes registered (route-pins.ts) until the move is
//   confirmed, and a short-lived forwarding entry for the moved session, and sends what still
//   reaches it on to the new owner, addressed to that one session (`headers.forClient`); the new
//   owner queues such messages into the transfer while its claim is in flight, or delivers them to
//   the restored session. The new owner confirms the claim (`session.claimed`) on the same ordered
//   link once the session is restored, so every message it forwarded before is passed back;
// - from the transfer's arrival to the restore, the new owner also keeps the matching messages it
//   handles itself that the old owner will not pass back (published here and not routed there, or
//   sent here by the old owner), since the old owner's routes may already be gone.
// A message can then arrive twice (QoS 1 allows it); none of a persistent session is lost.

import type { Broker } from "../broker/broker.ts";
import { M } from "../broker/metrics.ts";
import type { SessionTransfer } from "../broker/ports.ts";
import type { ClientInfo, Message, QoS, SubOpts } from "../broker/types.ts";
import { matchTopic } from "../mqtt/topic.ts";
import type { Logger } from "../telemetry/logger.ts";
import { type ClusterKeys, decodeSegment } from "./keys.ts";
import type { NodeLink } from "./link/node-link.ts";
import { transferFromWire, transferToWire, type WireTransfer } from "./message-wire.ts";
import type { RemoteRoutes } from "./remote-routes.ts";
import type { ClusterStore, Lease, WatchHandle } from "./store.ts";

export interface HandoverDeps {
  broker: Broker;
  store: ClusterStore;
  keys: ClusterKeys;
  nodeName: string;
  link: NodeLink;
  routes: RemoteRoutes;
  logger: Logger;
  handle(method: string, fn: (from: string, args: unknown) => unknown): void;
  isRunning(node: string): boolean;
  lease(): Lease | null;
  /** Keeps routes registered while a session moves away (route-pins.ts). */
  pin(filters: readonly string[]): void;
  unpin(filters: readonly string[]): void;
}

/** A session that moved away from this node, and where to. */
interface MovedSession {
  to: string;
  subs: [string, SubOpts][];
  /** Routes kept registered until the move is confirmed (empty once released). */
  pinned: string[];
  /** The new owner confirmed it restored the session. */
  claimed: boolean;
  until: number;
}

/** How long a moved session is followed: before and after the new owner's confirmation. */
const FOLLOW_UNCONFIRMED_MS = 30_000;
const FOLLOW_CONFIRMED_MS = 3_000;

export class SessionHandover {
  private readonly moved = new Map<string, MovedSession>();
  /** Claims in flight here: messages for the session meanwhile, and its subscriptions once known. */
  private readonly claiming = new Map<string, Claim>();
  private clientsWatch: WatchHandle | null = null;

  constructor(private readonly d: HandoverDeps) {
    const release = (c: ClientInfo) => {
      const key = d.keys.client(c.clientId);
      d.store
        .txn({ compare: [{ key, target: "value", op: "==", value: d.nodeName }], success: [{ type: "delete", key }] })
        .catch(() => {});
    };
    d.broker.hooks.add("session.discarded", release, 0, "svc_cluster");
    d.broker.hooks.add("session.terminated", release, 0, "svc_cluster");
    d.handle("session.takeover", (from, args) => {
      const { clientId, discard } = args as { clientId: string; discard: boolean };
      // Its routes stay until the new owner confirms: publishers keep sending here meanwhile.
      const s = discard ? undefined : d.broker.sessions.lookup(clientId);
      const pinned =
        s === undefined ? [] : [...s.subscriptions].filter(([, o]) => o.share === undefined).map(([f]) => f);
      d.pin(pinned);
      const t = d.broker.sessions.takeAway(clientId, discard);
      if (t === null) {
        d.unpin(pinned);
        return null;
      }
      this.forget(clientId);
      const until = Date.now() + FOLLOW_UNCONFIRMED_MS;
      this.moved.set(clientId, { to: from, subs: t.subscriptions, pinned, claimed: false, until });
      return transferToWire(t);
    });
    d.handle("session.claimed", (from, args) => {
      const { clientId } = args as { clientId: string };
      const m = this.moved.get(clientId);
      if (m !== undefined && m.to === from) {
        m.claimed = true;
        m.until = Date.now() + FOLLOW_CONFIRMED_MS;
        d.unpin(m.pinned);
        m.pinned = [];
      }
      return null;
    });
  }

  async start(): Promise<void> {
    const clients = this.d.keys.clients();
    this.clientsWatch = await this.d.store.watch(clients, (ev) => {
      if (ev.type === "put") this.onClientRegistered(decodeSegment(ev.key.slice(clients.length)), ev.value.toString());
    });
  }

  async stop(): Promise<void> {
    await this.clientsWatch?.close();
    this.clientsWatch = null;
    for (const id of [...this.moved.keys()]) this.forget(id);
  }

  /** Drops a moved session's entry, releasing its routes. */
  private forget(clientId: string): void {
    const m = this.moved.get(clientId);
    if (m === undefined) return;
    this.moved.delete(clientId);
    this.d.unpin(m.pinned);
  }

  /** Sessions that moved away and whose new owner has not confirmed yet. */
  get unconfirmed(): number {
    let n = 0;
    const now = Date.now();
    for (const [id, m] of this.moved) {
      if (m.until <= now) this.forget(id);
      else if (!m.claimed) n++;
    }
    return n;
  }

  /**
   * ClusterPort.claimSession: makes this node the owner of the client id's session, moving the
   * session here from the node that holds it, if any. Of two connects racing on two nodes the
   * later claim wins and takes the session from the earlier one: exactly one connection survives.
   */
  async claim(clientId: string, cleanStart: boolean): Promise<SessionTransfer | null> {
    const d = this.d;
    const key = d.keys.client(clientId);
    let transfer: SessionTransfer | null = null;
    let from: string | null = null;
    const pending: Claim = { late: [], subs: null, owner: null };
    this.claiming.set(clientId, pending);
    try {
      for (let attempt = 0; attempt < 5; attempt++) {
        const entry = await d.store.get(key);
        const owner = entry?.value.toString();
        if (owner !== undefined && owner !== d.nodeName) {
          if (d.isRunning(owner)) {
            const wire = (await d.link
              .call(owner, "session.takeover", { clientId, discard: cleanStart }, 5000)
              .catch(() => null)) as WireTransfer | null;
            if (wire !== null && transfer === null) {
              transfer = transferFromWire(wire);
              from = owner;
              pending.subs = transfer.subscriptions;
              pending.owner = owner;
            }
          } else if (attempt === 0) {
            // Its node died with it: that persistent session is lost, and counted.
            d.broker.metrics.inc(M.sessionsLost);
          }
        }
        const lease = d.lease();
        if (lease === null) return transfer; // store unreachable: serve anyway
        const claimed = await d.store.txn({
          compare:
            entry === undefined
              ? [{ key, target: "version", op: "==", value: 0 }]
              : [{ key, target: "mod", op: "==", value: entry.modRevision }],
          success: [{ type: "put", key, value: Buffer.from(d.nodeName), lease }],
        });
        if (claimed) return transfer;
      }
      d.logger.warn({ clientid: clientId }, "client id claim kept racing; serving it here");
      return transfer;
    } finally {
      // The session is restored right after this returns (same turn): what the old owner passed
      // on meanwhile joins the transfer, and the old owner stops following the session.
      this.claiming.delete(clientId);
      if (transfer !== null) {
        for (const m of pending.late) {
          const opts = subOpts(transfer.subscriptions, m);
          if (opts !== undefined)
            transfer.pending.push({ msg: plain(m), qos: minQos(m.qos, opts.qos), opts, retained: false });
        }
      }
      // Confirmed once the session is restored (right after this returns, before the next
      // macrotask): a message forwarded to the old owner before that is still passed back.
      const owner = from;
      if (owner !== null) {
        setImmediate(() => d.link.call(owner, "session.claimed", { clientId }, 5000).catch(() => {}));
      }
    }
  }

  /** A forwarded message addressed to one session: consumed here (true) or a plain one (false). */
  targeted(m: Message): boolean {
    const clientId = m.headers?.forClient;
    if (typeof clientId !== "string") return false;
    const waiting = this.claiming.get(clientId);
    if (waiting !== undefined) {
      waiting.late.push(m);
      return true;
    }
    const session = this.d.broker.sessions.lookup(clientId);
    const opts = session === undefined ? undefined : subOpts([...session.subscriptions], m);
    if (session !== undefined && opts !== undefined) session.deliver(plain(m), opts);
    return true;
  }

  /**
   * A message this node handled (published here: `from` null, or forwarded by `from`): kept for
   * sessions being restored here, passed on to sessions that moved away.
   */
  observe(m: Message, from: string | null): void {
    if (m.headers?.forClient !== undefined) return;
    if (this.claiming.size > 0) this.capture(m, from);
    if (this.moved.size > 0) this.follow(m, from);
  }

  private capture(m: Message, from: string | null): void {
    for (const [clientId, c] of this.claiming) {
      if (c.subs === null || c.owner === null) continue;
      const filter = firstMatch(c.subs, m.topic);
      if (filter === undefined) continue;
      // Routed to the old owner: it passes the message back itself.
      if (from === null && this.routesTo(m.topic, c.owner)) continue;
      c.late.push({ ...m, headers: { ...m.headers, forClient: clientId, forFilter: filter } });
    }
  }

  private follow(m: Message, from: string | null): void {
    const now = Date.now();
    for (const [clientId, mv] of this.moved) {
      if (mv.until <= now) {
        this.forget(clientId);
        continue;
      }
      // Forwarded by the new owner after it restored the session: it delivered it itself.
      if (from === mv.to && mv.claimed) continue;
      const filter = firstMatch(mv.subs, m.topic);
      if (filter === undefined) continue;
      if (from === null && this.routesTo(m.topic, mv.to)) continue;
      this.d.link.forward(mv.to, { ...m, headers: { ...m.headers, forClient: clientId, forFilter: filter } });
    }
  }

  private routesTo(topic: string, node: string): boolean {
    let found = false;
    this.d.routes.match(topic, (n) => {
      if (n === node) found = true;
    });
    return found;
  }

  /** The lease was re-granted: the client registrations of this node are written again. */
  reregister(): void {
    const d = this.d;
    const lease = d.lease();
    if (lease === null) return;
    for (const s of d.broker.sessions.allSessions()) {
      d.store.put(d.keys.client(s.clientId), Buffer.from(d.nodeName), { lease }).catch(() => {});
    }
  }

  /** Another node owns a client id this node still holds (a claim it lost): let go. */
  private onClientRegistered(clientId: string, owner: string): void {
    if (owner === this.d.nodeName) return;
    if (this.d.broker.sessions.lookup(clientId) !== undefined) this.d.broker.sessions.takeAway(clientId, true);
  }
}

interface Claim {
  late: Message[];
  subs: [string, SubOpts][] | null;
  owner: string | null;
}

/** The first plain (not shared) subscription matching `topic`. */
function firstMatch(subs: [string, SubOpts][], topic: string): string | undefined {
  for (const [f, o] of subs) if (o.share === undefined && matchTopic(f, topic)) return f;
  return undefined;
}

function subOpts(subs: Iterable<[string, SubOpts]>, m: Message): SubOpts | undefined {
  const want = m.headers?.forFilter;
  for (const [f, o] of subs) if (f === want) return o;
  return undefined;
}

function plain(m: Message): Message {
  const { forClient: _c, forFilter: _f, ...rest } = m.headers ?? {};
  return { ...m, headers: Object.keys(rest).length === 0 ? undefined : rest };
}

function minQos(a: QoS, b: QoS): QoS {
  return (a < b ? a : b) as QoS;
}
