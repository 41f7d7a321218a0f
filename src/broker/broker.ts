// The single-node core: publish() runs the `message.publish` hook fold, then routes to local
// subscribers and (through ClusterPort) to other nodes; dispatch() delivers locally only, for
// messages another node forwarded (no hooks, no re-routing, so no loops and no double rule runs).
// It also owns subscriptions on behalf of sessions, the live channels, the timer wheel and its sweep.

import { Hooks } from "../hooks/hooks.ts";
import type { ByteStream, ConnectionInfo, StreamOwner } from "../listeners/types.ts";
import { matchTopic, parseSharedFilter } from "../mqtt/topic.ts";
import type { Logger } from "../telemetry/logger.ts";
import { Channel } from "./channel/channel.ts";
import { Connection, type ConnectionDeps } from "./connection/connection.ts";
import type { BrokerHooks, HookPoints } from "./hookpoints.ts";
import { M, Metrics } from "./metrics.ts";
import {
  type AckHolder,
  type ClusterPort,
  NullCluster,
  type SessionTransfer,
  type TracingPort,
  UNTRACED,
} from "./ports.ts";
import { Router } from "./router/router.ts";
import type { Session } from "./session/session.ts";
import { SessionRegistry } from "./sessions.ts";
import { type BrokerSettings, DEFAULT_ZONE, type ZoneSettings } from "./settings.ts";
import { TimerWheel } from "./timer-wheel.ts";
import { isSysMessage, type Message, type SubOpts } from "./types.ts";

export class Broker {
  readonly hooks: BrokerHooks;
  readonly metrics = new Metrics();
  readonly router = new Router();
  readonly sessions: SessionRegistry;
  /** Every open connection's channel, connected or not. */
  readonly channels = new Set<Channel>();
  /** Deadlines of channels and sessions, turned by the sweep (`tickInterval` wide slots). */
  readonly timers: TimerWheel;
  cluster: ClusterPort = NullCluster;
  /** Message tracing, null while `telemetry.tracing` is off. */
  tracing: TracingPort | null = null;
  /** What became congested during the current publish: a session (SessionEnv) or a cluster link. */
  congested: AckHolder | null = null;
  readonly startedAt = Date.now();
  private timer: NodeJS.Timeout | undefined;

  constructor(
    readonly settings: BrokerSettings,
    readonly logger: Logger,
  ) {
    this.hooks = new Hooks<HookPoints>(logger);
    this.sessions = new SessionRegistry(this);
    this.timers = new TimerWheel(settings.tickInterval);
    this.metrics.addLive(() => [...this.channels].map((ch) => ch.counters));
  }

  get nodeName(): string {
    return this.settings.nodeName;
  }

  zone(name: string): ZoneSettings {
    return this.settings.zones.get(name) ?? this.settings.zones.get("external") ?? DEFAULT_ZONE;
  }

  aclDenyDisconnects(zone: string): boolean {
    return this.zone(zone).aclDenyAction === "disconnect";
  }

  /** What every Connection needs from the broker: one object, shared by all connections. */
  private readonly connectionDeps: ConnectionDeps = {
    metrics: this.metrics,
    makeChannel: (port, i) => new Channel(port, i, this, this.zone(i.zone)),
    onError: (err) => this.logger.error({ err }, "connection handler failed"),
  };

  /**
   * A listener accepted a connection: wrap it (the listener's ConnectionHandler). The Connection
   * is the stream's StreamOwner: it hears of 'error' and 'close' from the listener and names the
   * close reason.
   */
  readonly handleConnection = (stream: ByteStream, info: ConnectionInfo): StreamOwner =>
    new Connection(stream, info, this.connectionDeps);

  /**
   * Publishes a message: hooks, then local and remote routing. Returns the number of deliveries.
   * `received`: a PUBLISH an MQTT client sent (see TracingPort.publish).
   */
  publish(msg: Message, received = false): number {
    if (this.tracing !== null) {
      const n = this.tracing.publish(msg, this.route, received);
      if (n !== UNTRACED) return n;
    }
    return this.route(msg);
  }

  private readonly route = (msg: Message): number => {
    const sys = isSysMessage(msg);
    if (!sys) this.metrics.inc(M.messagesPublish);
    this.congested = null;
    let m: Message | null = msg;
    if (this.hooks.active["message.publish"] === true) {
      m = this.hooks.fold1("message.publish", msg, msg as Message | null) as Message | null;
      if (m === null) return 0;
    }
    const n = this.router.dispatch(m, this.settings.sharedStrategy) + this.cluster.forward(m);
    if (n === 0) this.noSubscribers(m, sys);
    return n;
  };

  /**
   * Whether a message the node publishes itself (`sys`, not retained) would reach anyone: a
   * subscriber to a `$` filter, another node (any cluster), or a message.publish or
   * message.dropped callback that acts on such messages (a topic trace). Callers that build one per
   * client event (presence) skip the work when nobody would hear: system messages are not counted
   * in the metrics either (route).
   */
  systemAudience(): boolean {
    return (
      this.router.hasDollarFilters() ||
      this.cluster !== NullCluster ||
      this.hooks.seesSystem("message.publish") ||
      this.hooks.seesSystem("message.dropped")
    );
  }

  /** Delivers a message forwarded by another node to local subscribers only. */
  dispatch(msg: Message): number {
    if (this.tracing !== null) return this.tracing.dispatch(msg, this.dispatchLocal);
    return this.dispatchLocal(msg);
  }

  private readonly dispatchLocal = (msg: Message): number => this.router.dispatch(msg, this.settings.sharedStrategy);

  /** Nobody took `m`: the message.dropped hook hears of it; only a non-system one is counted. */
  private noSubscribers(m: Message, sys: boolean): void {
    if (!sys) {
      this.metrics.inc(M.messagesDropped);
      this.metrics.inc(M.messagesDroppedNoSubscribers);
    }
    if (this.hooks.active["message.dropped"] === true)
      this.hooks.run("message.dropped", m, undefined, "no_subscribers");
  }

  /** Adds (or replaces) a subscription of `session`; `filter` may be a `$share/...` form. */
  subscribe(session: Session, filter: string, opts: SubOpts): void {
    const share = parseSharedFilter(filter);
    const o = share === null ? opts : { ...opts, share: share.group };
    const isNew = session.setSubscription(filter, o);
    this.router.add(share === null ? filter : share.filter, session, o, share?.group);
    this.hooks.run("session.subscribed", session.client, filter, o, isNew, session);
  }

  /** Rebuilds a session that moved here from another node (no subscribe hooks: nothing is new). */
  restoreSession(session: Session, t: SessionTransfer): void {
    session.expiryInterval = t.expiryInterval;
    for (const [filter, opts] of t.subscriptions) {
      const share = parseSharedFilter(filter);
      session.setSubscription(filter, opts);
      this.router.add(share === null ? filter : share.filter, session, opts, share?.group);
    }
    session.restore(t.pending);
  }

  unsubscribe(session: Session, filter: string): boolean {
    const opts = session.subscriptions.get(filter);
    if (opts === undefined) return false;
    session.deleteSubscription(filter);
    const share = parseSharedFilter(filter);
    this.router.remove(share === null ? filter : share.filter, session, share?.group);
    this.hooks.run("session.unsubscribed", session.client, filter, opts);
    return true;
  }

  /** A session ends: its subscriptions go, and QoS 1/2 messages owed through shared
   * subscriptions are redispatched to another member of the group. */
  endSession(session: Session): void {
    this.timers.cancel(session);
    if (session.subscriptionCount === 0) {
      session.clearPending();
      return;
    }
    const shared: { group: string; filter: string }[] = [];
    for (const key of session.subscriptions.keys()) {
      const share = parseSharedFilter(key);
      if (share !== null) shared.push(share);
    }
    for (const filter of [...session.subscriptions.keys()]) this.unsubscribe(session, filter);
    if (shared.length > 0) {
      for (const d of session.pending()) {
        if (d.opts.share === undefined || d.qos === 0) continue;
        for (const s of shared) {
          if (s.group !== d.opts.share || !matchTopic(s.filter, d.msg.topic)) continue;
          if (this.router.redispatchShared(d.msg, s.filter, s.group, this.settings.sharedStrategy, session)) break;
        }
      }
    }
    session.clearPending();
  }

  start(): void {
    this.timer = setInterval(() => this.tick(Date.now()), this.settings.tickInterval);
    this.timer.unref();
  }

  tick(now: number): void {
    this.timers.advance(now);
    this.sessions.tick(now);
  }

  /** SessionEnv: an offline session's expiry came. */
  sessionExpired(session: Session): void {
    this.sessions.expire(session);
  }

  /** Stops the sweep and closes every connection (DISCONNECT 0x8B to 5.0 clients). */
  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const ch of [...this.channels]) ch.kick(0x8b, "shutdown");
  }
}
