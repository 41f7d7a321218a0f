// The session registry (the family's channel manager): client id -> session and its live channel.
// Opens, resumes, takes over and discards sessions [MQTT-3.1.2-4..6, MQTT-3.1.4-3]; parks
// persistent sessions of disconnected clients until they expire; keeps wills whose delay has not
// run out [MQTT-3.1.3-9]. No timer per session: an offline session waits on the broker's timer
// wheel for its expiry (Session.due), delayed wills on the broker's sweep (tick).

import { RC } from "../mqtt/reason-codes.ts";
import type { Broker } from "./broker.ts";
import type { Channel } from "./channel/channel.ts";
import { ChurnMap } from "./churn-map.ts";
import type { SessionTransfer } from "./ports.ts";
import { Session, SessionCounts } from "./session/session.ts";
import type { Message } from "./types.ts";

interface PendingWill {
  msg: Message;
  at: number;
}

/** 0xFFFFFFFF: the session never expires [MQTT-3.1.2-?]. */
const NEVER = 0xffffffff;

export class SessionRegistry {
  // ChurnMaps: a client id that reconnects over and over (two devices taking the same id from
  // each other) would otherwise make every lookup of it ever longer.
  private readonly sessions = new ChurnMap<string, Session>();
  private readonly live = new ChurnMap<string, Channel>();
  private readonly wills = new Map<string, PendingWill>();
  /** Persistent sessions and sessions with subscriptions, kept as they change (stats). */
  readonly counts = new SessionCounts();

  constructor(private readonly broker: Broker) {}

  get size(): number {
    return this.sessions.size;
  }

  get connectedCount(): number {
    return this.live.size;
  }

  lookup(clientId: string): Session | undefined {
    return this.sessions.get(clientId);
  }

  channel(clientId: string): Channel | undefined {
    return this.live.get(clientId);
  }

  allSessions(): Iterable<Session> {
    return this.sessions.values();
  }

  liveChannels(): Iterable<Channel> {
    return this.live.values();
  }

  private list(id: string, session: Session): void {
    this.sessions.set(id, session);
    session.listIn(this.counts);
  }

  private unlist(id: string, session: Session): void {
    this.sessions.delete(id);
    session.listIn(null);
  }

  /** Binds `ch` to its client id's session: takeover of a live one, resume or a fresh start. */
  open(
    ch: Channel,
    cleanStart: boolean,
    expiry: number,
    transfer: SessionTransfer | null = null,
  ): { session: Session; present: boolean } {
    const id = ch.client.clientId;
    const hooks = this.broker.hooks;
    // A new connection before the will delay ran out cancels that will [MQTT-3.1.3-9], unless
    // Clean Start ends the old session: then the will is due now [MQTT-3.1.2-8].
    const pending = this.wills.get(id);
    if (pending !== undefined) {
      this.wills.delete(id);
      if (cleanStart && this.sessions.has(id)) this.broker.publish(pending.msg);
    }
    const old = this.live.get(id);
    if (old !== undefined && old !== ch) {
      this.live.delete(id);
      // [MQTT-3.1.4-3] the old connection's will is published as for any close; a delayed one is
      // cancelled by this new connection.
      const will = old.will;
      old.will = null;
      if (will !== null && (old.willDelay <= 0 || cleanStart)) this.broker.publish(will);
      old.session?.detach();
      old.session = null;
      hooks.run("session.takeovered", old.client);
      old.kick(RC.SESSION_TAKEN_OVER, "takeovered"); // [MQTT-3.1.4-3]
    }
    let session = this.sessions.get(id);
    let present = false;
    if (session !== undefined && cleanStart) {
      this.discard(session, "discarded");
      session = undefined;
    }
    if (session === undefined && transfer !== null && !cleanStart) {
      // The session moved here from another node: subscriptions and owed messages come with it.
      session = new Session(ch.client, ch.zone, this.broker);
      this.list(id, session);
      this.broker.restoreSession(session, transfer);
      present = true;
      hooks.run("session.resumed", ch.client);
    } else if (session === undefined) {
      session = new Session(ch.client, ch.zone, this.broker);
      this.list(id, session);
      hooks.run("session.created", ch.client);
    } else {
      present = true;
      session.parked = false;
      session.client = ch.client;
      session.zone = ch.zone;
      hooks.run("session.resumed", ch.client);
    }
    session.expiryInterval = expiry;
    this.live.set(id, ch);
    return { session, present };
  }

  /** The connection of `ch` closed: send or schedule its will, park or end its session. */
  channelClosed(ch: Channel, reason: string): void {
    const id = ch.client.clientId;
    if (this.live.get(id) === ch) this.live.delete(id);
    const session = ch.session;
    ch.session = null;
    if (session === null) return;
    session.detach();
    const will = ch.will;
    ch.will = null;
    const expiry = session.expiryInterval;
    if (expiry === 0) this.discard(session, reason);
    else {
      session.park();
      session.expiresAt = expiry >= NEVER ? 0 : Date.now() + expiry * 1000;
      if (session.expiresAt !== 0) this.broker.timers.schedule(session, session.expiresAt);
    }
    if (will !== null) {
      // [MQTT-3.1.2-8] published at the will delay or when the session ends, whichever is first.
      const delay = Math.min(ch.willDelay, expiry);
      if (delay <= 0) this.broker.publish(will);
      else this.wills.set(id, { msg: will, at: Date.now() + delay * 1000 });
    }
  }

  /**
   * The client id connected on another node: closes the connection here (5.0: DISCONNECT 0x8E,
   * the will published as for a local takeover), removes the session without redispatching its
   * messages, and returns it for the other node (null when there is none or `discard`).
   */
  takeAway(clientId: string, discard: boolean): SessionTransfer | null {
    this.wills.delete(clientId);
    const ch = this.live.get(clientId);
    if (ch !== undefined) {
      this.live.delete(clientId);
      const will = ch.will;
      ch.will = null;
      if (will !== null && (ch.willDelay <= 0 || discard)) this.broker.publish(will);
      ch.session?.detach();
      ch.session = null;
      ch.kick(RC.SESSION_TAKEN_OVER, "takeovered");
    }
    const session = this.sessions.get(clientId);
    if (session === undefined) return null;
    const transfer: SessionTransfer | null = discard
      ? null
      : {
          expiryInterval: session.expiryInterval,
          subscriptions: [...session.subscriptions],
          pending: [...session.pending()].map((d) => ({ msg: d.msg, qos: d.qos, opts: d.opts, retained: d.retained })),
        };
    // The owed messages travel with the session: nothing to redispatch here.
    session.clearPending();
    this.unlist(clientId, session);
    session.parked = false;
    this.broker.endSession(session);
    this.broker.hooks.run("session.takeovered", session.client);
    return transfer;
  }

  /** Ends a session: drops its subscriptions, redispatches its shared-subscription messages. */
  discard(session: Session, reason: string): void {
    const id = session.clientId;
    if (this.sessions.get(id) === session) this.unlist(id, session);
    session.parked = false;
    this.broker.endSession(session);
    if (reason === "discarded") this.broker.hooks.run("session.discarded", session.client);
    else this.broker.hooks.run("session.terminated", session.client, reason);
    const will = this.wills.get(id);
    if (will !== undefined && this.sessions.get(id) === undefined) {
      this.wills.delete(id);
      this.broker.publish(will.msg);
    }
  }

  /**
   * Kicks a client out (API, bans): the connection gets DISCONNECT 0x98 (5.0) and closes, and its
   * session ends, persistent or not, as the family's kick does. False when the id is unknown.
   */
  kick(clientId: string): boolean {
    const ch = this.live.get(clientId);
    const session = this.sessions.get(clientId);
    if (ch === undefined && session === undefined) return false;
    if (session !== undefined) session.expiryInterval = 0;
    if (ch !== undefined) ch.kick(RC.ADMINISTRATIVE_ACTION, "kicked");
    else if (session !== undefined) this.discard(session, "kicked");
    return true;
  }

  /** An offline session's expiry came (its timer on the wheel): it ends, unless resumed meanwhile. */
  expire(session: Session): void {
    if (session.parked) this.discard(session, "expired");
  }

  /** Sweep: due wills. */
  tick(now: number): void {
    for (const [id, w] of this.wills) {
      if (w.at <= now) {
        this.wills.delete(id);
        this.broker.publish(w.msg);
      }
    }
  }
}
