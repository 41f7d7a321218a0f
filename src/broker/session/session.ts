// A client's MQTT session (MQTT 5.0 section 4.1): subscriptions, the outgoing inflight window,
// the queue of messages waiting for the window or for the client to come back, incoming QoS 2
// packet ids awaiting PUBREL, and the packet id allocator. I/O-free: it talks to the connection
// through a SessionOutlet and to the rest of the broker through SessionEnv.

import { KeptBytes } from "../../mqtt/kept-bytes.ts";
import { now } from "../clock.ts";
import type { BrokerHooks, SessionHandle } from "../hookpoints.ts";
import { M, type Metrics } from "../metrics.ts";
import type { AckHolder } from "../ports.ts";
import type { Subscriber } from "../router/router.ts";
import type { ZoneSettings } from "../settings.ts";
import type { Timed, TimerWheel } from "../timer-wheel.ts";
import type { ClientInfo, Message, QoS, SubOpts } from "../types.ts";
import { type Delivery, ENDED, type InflightEntry, type SessionOutlet } from "./delivery.ts";
import { MessageQueue } from "./message-queue.ts";
import { PacketIdAllocator } from "./packet-ids.ts";

export interface SessionEnv {
  hooks: BrokerHooks;
  metrics: Metrics;
  /** Set by a session that became congested (see Session.held) during the current publish. */
  congested: AckHolder | null;
  /** Where a session waits for its deadlines (see Session.due). */
  timers: TimerWheel;
  /** An offline session's expiry came: the registry ends it (unless it was resumed meanwhile). */
  sessionExpired(session: Session): void;
}

/**
 * What a session registry counts of the sessions it lists, kept by the sessions themselves as they
 * change (no walk over every session for the stats).
 */
export class SessionCounts {
  /** Listed sessions with an expiry interval over 0 (`sessions.persistent`). */
  persistent = 0;
  /** Listed sessions with at least one subscription (`subscribers`). */
  subscribers = 0;
}

/** Most publishers a congested session holds back before it lets them all go. */
const MAX_HELD = 10_000;
/**
 * Longest a congested session holds publishers back without sending its client anything (checked
 * on the timer wheel): a subscriber that stopped reading must not stall its publishers, and the other
 * subscribers of their messages, for longer. It then holds no one until it has caught up, and its
 * full queue drops the oldest. A slow subscriber that still takes messages holds on (no loss).
 */
export const HOLD_LIMIT_MS = 2000;

/** Publishers a congested session holds back (what lets each go on), and its progress. */
class Held {
  readonly releases: (() => void)[] = [];
  constructor(
    /** When the session last showed progress (the hold began, or it had sent more since). */
    public since: number,
    /** The session's `delivered` count then. */
    public mark: number,
  ) {}
}
/**
 * Queue length over which a connected session holds its publishers: half its bound (5,000 when
 * unbounded), and at most two inflight windows, which is all it needs to refill its window as the
 * acknowledgements come back. The rest waits with the publishers (in their sockets, or unsent
 * behind held acknowledgements) instead of in this process: a message queued here for long outlives
 * young collections, and its payload's read buffer is then freed only by a full one. Measured with
 * `node bench/run.js --only fan-in,fan-out,pairs,wildcard --qos 1,2 --peers svc` (zone queue 10,000,
 * window 32), half the bound against two windows, two alternated runs each, deliveries/s: fan-out
 * QoS 1 787-796k -> 1.12-1.27M, pairs QoS 1 338-345k -> 419-435k, fan-in QoS 1 249-260k ->
 * 332-341k, fan-in 16 KB QoS 1 46.8-47.3k -> 53.8-56.3k; QoS 2 and wildcard alike or better.
 */
export function highWatermark(maxMqueueLen: number, maxInflight: number): number {
  const half = maxMqueueLen > 0 ? Math.floor(maxMqueueLen / 2) : 5000;
  return Math.max(8, Math.min(half, 2 * maxInflight));
}

/** The payloads offline sessions keep (kept-bytes.ts). */
const KEPT = new KeptBytes();

/**
 * An offline session keeps what it holds for as long as it lasts (hours). A payload read off a
 * socket is a view of more: a slice of Node's Buffer pool (small), or of the whole read (up to
 * 64 KB, other messages' bytes with it), all of which a kept view keeps. The message gets its
 * payload in kept memory instead, once (the other sessions keeping it share it).
 */
function keepOwnPayload(msg: Message): void {
  msg.payload = KEPT.keep(msg.payload);
}

/** `held` once a hold ran out: no new hold until the session has caught up. */
const HOLDS_OFF = new Held(0, 0);
const NO_ENTRIES: readonly InflightEntry[] = [];
const NO_TIMES: readonly number[] = [];

export class Session implements SessionHandle, Subscriber, Timed {
  readonly createdAt = Date.now();
  wheelSlot: Set<Timed> | null = null;
  wheelAt = 0;
  // The three maps are made on first use: an idle connection (most of a large fleet) never
  // pays for their tables.
  #subscriptions: Map<string, SubOpts> | null = null;
  #inflight: Map<number, InflightEntry> | null = null;
  #awaitingRel: Map<number, number> | null = null;
  readonly mqueue: MessageQueue<Delivery>;
  /** Made on the first QoS 1/2 delivery: a session that never gets one never numbers a packet. */
  #pids: PacketIdAllocator | null = null;

  /** Read-only for everyone else: changes go through setSubscription and deleteSubscription. */
  get subscriptions(): ReadonlyMap<string, SubOpts> {
    this.#subscriptions ??= new Map();
    return this.#subscriptions;
  }

  /** Adds or replaces a subscription; true when `filter` is new to this session. */
  setSubscription(filter: string, opts: SubOpts): boolean {
    const subs = (this.#subscriptions ??= new Map());
    const before = subs.size;
    subs.set(filter, opts);
    if (before === subs.size) return false;
    if (before === 0 && this.#counts !== null) this.#counts.subscribers++;
    return true;
  }

  subscribedWith(filter: string): SubOpts | undefined {
    return this.#subscriptions?.get(filter);
  }

  /** Removes a subscription; false when the session had none on `filter`. */
  deleteSubscription(filter: string): boolean {
    const subs = this.#subscriptions;
    if (subs === null || !subs.delete(filter)) return false;
    if (subs.size === 0 && this.#counts !== null) this.#counts.subscribers--;
    return true;
  }

  /** Session expiry interval in seconds (0xFFFFFFFF = never). */
  get expiryInterval(): number {
    return this.#expiryInterval;
  }

  set expiryInterval(v: number) {
    const c = this.#counts;
    if (c !== null) c.persistent += (v > 0 ? 1 : 0) - (this.#expiryInterval > 0 ? 1 : 0);
    this.#expiryInterval = v;
  }

  /** Listed in the registry that keeps `counts` (null: taken out of it); the counts follow. */
  listIn(counts: SessionCounts | null): void {
    const old = this.#counts;
    if (old === counts) return;
    const p = this.#expiryInterval > 0 ? 1 : 0;
    const s = this.subscriptionCount > 0 ? 1 : 0;
    if (old !== null) {
      old.persistent -= p;
      old.subscribers -= s;
    }
    if (counts !== null) {
      counts.persistent += p;
      counts.subscribers += s;
    }
    this.#counts = counts;
  }

  /** subscriptions.size without making the map. */
  get subscriptionCount(): number {
    return this.#subscriptions?.size ?? 0;
  }

  get inflight(): Map<number, InflightEntry> {
    this.#inflight ??= new Map();
    return this.#inflight;
  }

  /** Incoming QoS 2 packet ids (PUBREC sent, PUBREL awaited) -> arrival time. */
  get awaitingRel(): Map<number, number> {
    this.#awaitingRel ??= new Map();
    return this.#awaitingRel;
  }
  private outlet: SessionOutlet | null = null;
  /** Inflight window: the zone's max_inflight lowered by the client's Receive Maximum. */
  maxInflight: number;
  #expiryInterval = 0;
  #counts: SessionCounts | null = null;
  /** When an offline session expires (ms since epoch); 0 while connected. */
  expiresAt = 0;
  mqueueDropped = 0;
  /**
   * Offline, waiting for its client or its expiry (set by the registry: a field, not a Set of
   * sessions, which a session parked and resumed over and over would make ever slower).
   */
  parked = false;
  /**
   * Ingress back-pressure: while this connected session's queue is over its high watermark, or
   * its socket does not take a QoS 0 message (over the connection's write watermark), the
   * publishers of what is routed to it are held: the acknowledgements of QoS 1/2 publishes, the
   * reading of a QoS 0 publisher's connection (handle-publish.ts). Publishers slow down to its pace
   * instead of overflowing its queue. Released once the queue is at or below the low watermark
   * and the socket takes messages again, or after HOLD_LIMIT_MS without anything sent.
   */
  private held: Held | null = null;
  private highWater: number;
  private lowWater: number;
  delivered = 0;
  enqueued = 0;

  constructor(
    public client: ClientInfo,
    public zone: ZoneSettings,
    private readonly env: SessionEnv,
  ) {
    this.mqueue = new MessageQueue<Delivery>(zone.maxMqueueLen);
    this.maxInflight = zone.maxInflight > 0 ? zone.maxInflight : 65535;
    this.highWater = highWatermark(zone.maxMqueueLen, this.maxInflight);
    this.lowWater = Math.floor(this.highWater / 2);
  }

  /** Holds `release` until this session has caught up (see `held`). */
  holdAck(release: () => void): void {
    const h = this.held;
    if (h === null || h === HOLDS_OFF || h.releases.length >= MAX_HELD) {
      release();
      return;
    }
    h.releases.push(release);
  }

  /** Whether this session holds publishers back right now. */
  get holding(): boolean {
    return this.held !== null && this.held !== HOLDS_OFF;
  }

  /** Lets every held publisher go; `after` is what `held` becomes (null, or HOLDS_OFF). */
  private releaseHeld(after: Held | null = null): void {
    const h = this.held;
    this.held = after;
    if (h !== null) for (const f of h.releases) f();
  }

  get clientId(): string {
    return this.client.clientId;
  }

  isOnline(): boolean {
    return this.outlet !== null;
  }

  /** Connects the session to a live channel and resends what was unacknowledged [MQTT-4.4.0-1]. */
  attach(outlet: SessionOutlet, receiveMaximum: number): void {
    this.outlet = outlet;
    this.expiresAt = 0;
    const zoneMax = this.zone.maxInflight > 0 ? this.zone.maxInflight : 65535;
    this.maxInflight = Math.min(zoneMax, receiveMaximum);
    const at = now();
    for (const e of this.#inflight?.values() ?? NO_ENTRIES) {
      e.sentAt = at;
      if (e.phase === 1) {
        if (!outlet.sendPublish(e.d, e.pid, true)) this.endInflight(e);
      } else outlet.sendPubrel(e.pid);
    }
    this.drain();
    this.rearm();
  }

  detach(): void {
    this.outlet = null;
    // An offline session must not throttle publishers: it queues or drops instead.
    this.releaseHeld();
  }

  /** The session outlives its connection: parked, and what it holds keeps payloads of its own. */
  park(): void {
    this.parked = true;
    for (const e of this.#inflight?.values() ?? NO_ENTRIES) keepOwnPayload(e.d.msg);
    for (const d of this.mqueue) keepOwnPayload(d.msg);
  }

  /** SessionHandle: a retained message for a new subscription [MQTT-3.3.1-8]. */
  deliverRetained(msg: Message, opts: SubOpts): void {
    this.deliver(msg, opts, true);
  }

  /** Hands one matched message to this session [MQTT-3.8.4-3..8]. */
  deliver(msg: Message, opts: SubOpts, retained = false): void {
    // No Local [MQTT-3.8.3-3]; 3.x has no such flag, `ignore_loop_deliver` stands in for it.
    const noLocal = opts.nl || (this.zone.ignoreLoopDeliver && this.client.protoVer < 5);
    if (noLocal && msg.from === this.client.clientId && msg.from !== "") {
      this.drop(msg, "no_local", M.deliveryDroppedNoLocal);
      return;
    }
    let qos: QoS = opts.qos;
    if (!this.zone.upgradeQos && msg.qos < qos) qos = msg.qos;
    if (msg.expiresAt !== 0 && msg.expiresAt <= now()) {
      this.drop(msg, "expired", M.deliveryDroppedExpired);
      return;
    }
    const d: Delivery = { msg, qos, opts, retained };
    const out = this.outlet;
    if (out === null) {
      this.enqueue(d);
      return;
    }
    if (qos === 0) {
      // A socket that does not keep up: QoS 0 waits in the (bounded) queue like QoS 1/2 and goes
      // out when the socket drains, in order with what is already queued.
      if (this.mqueue.length > 0 || !out.writable()) {
        this.enqueue(d);
        return;
      }
      if (out.sendPublish(d, 0, false)) this.delivered++;
      else this.drop(msg, "too_large", M.deliveryDroppedTooLarge);
      return;
    }
    if ((this.#inflight?.size ?? 0) < this.maxInflight && this.mqueue.length === 0) this.sendInflight(d, out);
    else this.enqueue(d);
  }

  private enqueue(d: Delivery): void {
    // A connected session whose socket takes no more QoS 0, or whose queue is over its high
    // watermark, holds the publisher of this delivery (see `held`).
    const out = this.outlet;
    if (out !== null && (d.qos === 0 ? !out.writable() : this.mqueue.length >= this.highWater)) this.congest();
    if (d.qos === 0 && !this.zone.mqueueStoreQos0) {
      this.drop(d.msg, "qos0_msg", M.deliveryDroppedQos0);
      return;
    }
    if (out === null) keepOwnPayload(d.msg);
    this.enqueued++;
    const dropped = this.mqueue.push(d);
    if (dropped !== undefined) {
      this.mqueueDropped++;
      this.drop(dropped.msg, "queue_full", M.deliveryDroppedQueueFull);
    }
  }

  /** The current publish made this session congested: its publisher is held (see `held`). */
  private congest(): void {
    if (this.held === HOLDS_OFF) return;
    if (this.held === null) {
      const at = now();
      this.held = new Held(at, this.delivered);
      this.env.timers.scheduleBy(this, at + HOLD_LIMIT_MS);
    }
    this.env.congested = this;
  }

  /** Out of the window; the entry lets go of its delivery (see ENDED). */
  private endInflight(e: InflightEntry): void {
    this.inflight.delete(e.pid);
    e.d = ENDED;
  }

  private sendInflight(d: Delivery, out: SessionOutlet): void {
    this.#pids ??= new PacketIdAllocator();
    const pid = this.#pids.next(this.inflight);
    if (pid === 0) {
      this.enqueue(d);
      return;
    }
    const e: InflightEntry = { d, pid, phase: 1, sentAt: now() };
    this.inflight.set(pid, e);
    if (out.protoVer < 5) this.env.timers.scheduleBy(this, e.sentAt + this.zone.retryInterval);
    if (out.sendPublish(d, pid, false)) this.delivered++;
    else {
      this.endInflight(e);
      this.drop(d.msg, "too_large", M.deliveryDroppedTooLarge);
    }
  }

  /** Moves queued messages into the inflight window while it has room. */
  drain(): void {
    const out = this.outlet;
    if (out === null) return;
    const at = now();
    while (this.mqueue.length > 0) {
      const head = this.mqueue.peek() as Delivery;
      if (head.msg.expiresAt !== 0 && head.msg.expiresAt <= at) {
        this.mqueue.shift();
        this.drop(head.msg, "expired", M.deliveryDroppedExpired);
        continue;
      }
      if (head.qos === 0) {
        if (!out.writable()) break;
        this.mqueue.shift();
        if (out.sendPublish(head, 0, false)) this.delivered++;
        continue;
      }
      if ((this.#inflight?.size ?? 0) >= this.maxInflight) break;
      this.mqueue.shift();
      this.sendInflight(head, out);
    }
    if (this.held !== null && this.caughtUp(out)) this.releaseHeld();
  }

  /**
   * Whether held publishers may go on: the queue at its low watermark (empty once a hold ran out)
   * and the socket taking messages again.
   */
  private caughtUp(out: SessionOutlet): boolean {
    return this.mqueue.length <= (this.held === HOLDS_OFF ? 0 : this.lowWater) && out.writable();
  }

  /** PUBACK for an outgoing QoS 1 message; false when the id was unknown. */
  onPuback(pid: number): boolean {
    const e = this.#inflight?.get(pid);
    if (e === undefined || e.d.qos !== 1) return false;
    const msg = e.d.msg;
    this.endInflight(e);
    this.acked(msg);
    this.drain();
    return true;
  }

  /** PUBREC: 'ok' -> send PUBREL; 'missed' -> unknown id; 'done' -> an error code ended it. */
  onPubrec(pid: number, rc: number): "ok" | "missed" | "done" {
    const e = this.#inflight?.get(pid);
    if (e === undefined || e.d.qos !== 2) return "missed";
    if (rc >= 0x80) {
      // [MQTT-4.3.3-4]: a failed PUBREC ends the exchange; the window slot is free again.
      this.endInflight(e);
      this.drain();
      return "done";
    }
    if (e.phase === 1) {
      e.phase = 2;
      e.sentAt = now();
    }
    return "ok";
  }

  onPubcomp(pid: number): boolean {
    const e = this.#inflight?.get(pid);
    if (e === undefined || e.phase !== 2) return false;
    const msg = e.d.msg;
    this.endInflight(e);
    this.acked(msg);
    this.drain();
    return true;
  }

  private acked(msg: Message): void {
    this.env.metrics.inc(M.messagesAcked);
    if (this.env.hooks.active["message.acked"] === true) this.env.hooks.run("message.acked", this.client, msg);
  }

  /** Incoming QoS 2: records the id; false when it is a duplicate (already awaiting PUBREL). */
  awaitRel(pid: number): "new" | "dup" | "full" {
    if (this.awaitingRel.has(pid)) return "dup";
    if (this.zone.maxAwaitingRel > 0 && this.awaitingRel.size >= this.zone.maxAwaitingRel) return "full";
    const at = now();
    this.awaitingRel.set(pid, at);
    this.env.timers.scheduleBy(this, at + this.zone.awaitRelTimeout);
    return "new";
  }

  /** PUBREL for an incoming QoS 2 message; false when the id was unknown. */
  release(pid: number): boolean {
    return this.#awaitingRel?.delete(pid) ?? false;
  }

  /**
   * Timer wheel. Offline: the expiry came. Connected: resends unacknowledged messages after
   * retry_interval (3.x only: 5.0 resends only on reconnect [MQTT-4.4.0-1]), forgets QoS 2 ids
   * whose PUBREL never came (await_rel_timeout), ends a hold of publishers that saw nothing sent
   * for HOLD_LIMIT_MS; then waits for the next of those deadlines.
   */
  due(now: number): void {
    const out = this.outlet;
    if (out === null) {
      if (this.expiresAt === 0) return;
      if (this.expiresAt <= now) this.env.sessionExpired(this);
      else this.env.timers.schedule(this, this.expiresAt);
      return;
    }
    const h = this.held;
    if (h !== null && h !== HOLDS_OFF && now - h.since >= HOLD_LIMIT_MS) {
      if (h.mark === this.delivered) this.releaseHeld(HOLDS_OFF);
      else {
        h.since = now;
        h.mark = this.delivered;
      }
    }
    if (out.protoVer < 5 && (this.#inflight?.size ?? 0) > 0) {
      const due = now - this.zone.retryInterval;
      for (const e of this.#inflight?.values() ?? NO_ENTRIES) {
        if (e.sentAt > due) continue;
        e.sentAt = now;
        if (e.phase === 1) out.sendPublish(e.d, e.pid, true);
        else out.sendPubrel(e.pid);
      }
    }
    if ((this.#awaitingRel?.size ?? 0) > 0) {
      const due = now - this.zone.awaitRelTimeout;
      for (const [pid, at] of this.awaitingRel) {
        if (at > due) continue;
        this.awaitingRel.delete(pid);
        this.env.metrics.inc(M.qos2Expired);
      }
    }
    this.rearm();
  }

  /** A connected session waits for the earliest deadline of its work, if it has any. */
  private rearm(): void {
    let at = Number.POSITIVE_INFINITY;
    const h = this.held;
    if (h !== null && h !== HOLDS_OFF) at = h.since + HOLD_LIMIT_MS;
    if ((this.outlet?.protoVer ?? 5) < 5) {
      const retry = this.zone.retryInterval;
      for (const e of this.#inflight?.values() ?? NO_ENTRIES) at = Math.min(at, e.sentAt + retry);
    }
    const wait = this.zone.awaitRelTimeout;
    for (const t of this.#awaitingRel?.values() ?? NO_TIMES) at = Math.min(at, t + wait);
    if (at === Number.POSITIVE_INFINITY) this.env.timers.cancel(this);
    else this.env.timers.schedule(this, at);
  }

  /** Queues messages a session brought from another node (sent when the client is attached). */
  restore(pending: readonly Delivery[]): void {
    for (const d of pending) this.enqueue(d);
  }

  /** Everything still owed to the client, for shared-subscription redispatch on termination. */
  *pending(): Iterable<Delivery> {
    for (const e of this.#inflight?.values() ?? NO_ENTRIES) if (e.phase === 1) yield e.d;
    yield* this.mqueue;
  }

  clearPending(): void {
    this.releaseHeld();
    for (const e of this.#inflight?.values() ?? NO_ENTRIES) this.endInflight(e);
    this.mqueue.clear();
    this.#awaitingRel?.clear();
  }

  private drop(msg: Message, reason: string, idx: number): void {
    const m = this.env.metrics;
    m.inc(idx);
    if (idx !== M.deliveryDropped) m.inc(M.deliveryDropped);
    m.inc(M.messagesDropped);
    if (reason === "expired") {
      m.inc(M.messagesExpired);
      m.inc(M.messagesDroppedExpired);
    }
    if (this.env.hooks.has("delivery.dropped")) this.env.hooks.run("delivery.dropped", this.client, msg, reason);
  }
}
