// The MQTT state machine of one connection (MQTT 5.0 sections 3 and 4): idle -> (authenticating)
// -> connected -> disconnected. It reads parsed packets, decides, and writes through its
// ConnectionPort; it owns no socket and no timer (it waits on the broker's timer wheel). The work per
// packet kind lives in the handle-*.ts files beside it; replies for protocol outcomes are built in
// one place (reply.ts).

import type { IConnectPacket, Packet } from "mqtt-packet";
import type { ConnectionInfo } from "../../listeners/types.ts";
import { encodeAck } from "../../mqtt/fast-codec.ts";
import { RC, reasonName } from "../../mqtt/reason-codes.ts";
import type { Broker } from "../broker.ts";
import { now } from "../clock.ts";
import { M } from "../metrics.ts";
import type { Delivery, SessionOutlet } from "../session/delivery.ts";
import type { Session } from "../session/session.ts";
import type { InboundAliases, OutboundAliases } from "../session/topic-aliases.ts";
import type { ZoneSettings } from "../settings.ts";
import type { Timed } from "../timer-wheel.ts";
import type { ClientInfo, Message } from "../types.ts";
import { buildPublish, takeTrailingPayload } from "./build-publish.ts";
import { handleAcks } from "./handle-acks.ts";
import { handleAuth } from "./handle-auth.ts";
import { handleConnect } from "./handle-connect.ts";
import { handleDisconnect } from "./handle-disconnect.ts";
import { handlePublish } from "./handle-publish.ts";
import { handleSubscribe } from "./handle-subscribe.ts";
import { handleUnsubscribe } from "./handle-unsubscribe.ts";
import type { ConnectionPort } from "./port.ts";
import { protocolError } from "./reply.ts";

export type ChannelState = "idle" | "authenticating" | "connected" | "disconnected";

/** A 5.0 enhanced authentication exchange (MQTT 5.0 section 4.12). */
export interface AuthExchange {
  /** The CONNECT's Authentication Method; every AUTH must carry the same. */
  method: string;
  /** What the provider keeps between steps. */
  state: unknown;
  step: number;
  /** The CONNECT being authenticated through AUTH packets, null once decided. */
  connect: IConnectPacket | null;
}

/**
 * Per-connection traffic counters: the API's recv_* / send_* client fields, and the node's byte,
 * packet and per-QoS message counters while the connection lives (metrics.ts adds the live ones
 * to what closed connections left, so each event is counted once, in one place).
 */
export class ChannelCounters {
  recvOct = 0;
  recvPkt = 0;
  recvMsg = 0;
  sendOct = 0;
  sendPkt = 0;
  sendMsg = 0;
  recvQos0 = 0;
  recvQos1 = 0;
  recvQos2 = 0;
  sendQos0 = 0;
  sendQos1 = 0;
  sendQos2 = 0;
  resent = 0;

  /** Adds these counters to node totals (`v` indexed like Metrics). */
  addTo(v: Float64Array): void {
    v[M.bytesReceived] += this.recvOct;
    v[M.packetsReceived] += this.recvPkt;
    v[M.bytesSent] += this.sendOct;
    v[M.packetsSent] += this.sendPkt;
    v[M.qosReceived[0]] += this.recvQos0;
    v[M.qosReceived[1]] += this.recvQos1;
    v[M.qosReceived[2]] += this.recvQos2;
    v[M.qosSent[0]] += this.sendQos0;
    v[M.qosSent[1]] += this.sendQos1;
    v[M.qosSent[2]] += this.sendQos2;
    v[M.publishResent] += this.resent;
  }
}

export class Channel implements SessionOutlet, Timed {
  state: ChannelState = "idle";
  readonly createdAt = Date.now();
  connectedAt = 0;
  lastRecv = Date.now();
  protoVer = 4;
  keepalive = 0;
  client: ClientInfo;
  session: Session | null = null;
  will: Message | null = null;
  /** 5.0 Will Delay Interval (s). */
  willDelay = 0;
  cleanStart = true;
  inAliases: InboundAliases | null = null;
  outAliases: OutboundAliases | null = null;
  /** Client's Maximum Packet Size (5.0), 0 = no limit beyond the protocol's. */
  clientMaxPacket = 0;
  requestProblemInfo = true;
  /** Set when the client sent DISCONNECT, so close handling knows it was orderly. */
  disconnectRc = -1;
  /**
   * Enhanced authentication (5.0 AUTH exchange), made when the CONNECT names a method: most
   * connections never have one, so its fields live apart rather than in every Channel.
   */
  auth: AuthExchange | null = null;
  readonly counters = new ChannelCounters();
  wheelSlot: Set<Timed> | null = null;
  wheelAt = 0;

  // The ConnectionInfo is not kept: `client` holds the fields the broker reads (peer address,
  // listener, zone), and one object per connection fewer is what an idle fleet saves.
  constructor(
    readonly conn: ConnectionPort,
    info: ConnectionInfo,
    readonly broker: Broker,
    readonly zone: ZoneSettings,
  ) {
    conn.setMaxInbound(zone.maxPacketSize);
    this.client = {
      clientId: "",
      username: undefined,
      peerHost: info.peerHost,
      peerPort: info.peerPort,
      sockPort: info.sockPort,
      listener: info.listener,
      zone: info.zone,
      protoName: "MQTT",
      protoVer: 4,
      isSuperuser: false,
      isBridge: false,
      mountpoint: undefined,
      peerCert: info.peerCert,
    };
    broker.channels.add(this);
    // The idle timeout: CONNECT comes before it or the connection closes.
    if (Number.isFinite(zone.idleTimeout)) broker.timers.schedule(this, this.createdAt + zone.idleTimeout + 1);
  }

  get clientId(): string {
    return this.client.clientId;
  }

  bytesIn(n: number): void {
    this.counters.recvOct += n;
  }

  bytesOut(n: number): void {
    this.counters.sendOct += n;
    this.counters.sendPkt++;
  }

  /** The connection reads again after holding its reading: the time nobody listened is not silence. */
  readingResumed(): void {
    this.lastRecv = now();
  }

  handleIn(p: Packet): void | Promise<void> {
    this.lastRecv = now();
    this.counters.recvPkt++;
    switch (p.cmd) {
      case "connect":
        if (this.state !== "idle") return protocolError(this, "second CONNECT"); // [MQTT-3.1.0-2]
        return handleConnect(this, p);
      case "auth":
        return handleAuth(this, p);
      default:
        if (this.state !== "connected") return protocolError(this, `${p.cmd} before CONNACK`);
    }
    switch (p.cmd) {
      case "publish":
        return handlePublish(this, p);
      case "puback":
      case "pubrec":
      case "pubrel":
      case "pubcomp":
        return handleAcks(this, p);
      case "subscribe":
        return handleSubscribe(this, p);
      case "unsubscribe":
        return handleUnsubscribe(this, p);
      case "pingreq":
        this.broker.metrics.inc(M.pingreqReceived);
        this.conn.send({ cmd: "pingresp" });
        this.broker.metrics.inc(M.pingrespSent);
        return;
      case "disconnect":
        return handleDisconnect(this, p);
      default:
        return protocolError(this, `unexpected ${p.cmd} from a client`);
    }
  }

  // ---- SessionOutlet ------------------------------------------------------------------------

  sendPublish(d: Delivery, pid: number, dup: boolean): boolean {
    if (this.state !== "connected") return false;
    const bytes = buildPublish(this, d, pid, dup);
    if (bytes === null) return false;
    this.conn.sendBytes(bytes);
    const payload = takeTrailingPayload();
    if (payload !== null) this.conn.sendBytes(payload);
    // Plain per-connection counters; the node totals (messages.sent, packets.publish.sent,
    // messages.qosN.sent, messages.delivered) are derived from them (metrics.ts).
    const c = this.counters;
    c.sendMsg++;
    if (d.qos === 0) c.sendQos0++;
    else if (d.qos === 1) c.sendQos1++;
    else c.sendQos2++;
    if (dup) c.resent++;
    if (this.broker.hooks.active["message.delivered"] === true)
      this.broker.hooks.run("message.delivered", this.client, d.msg);
    return true;
  }

  sendPubrel(pid: number): void {
    this.conn.sendBytes(encodeAck(6, pid, 0, false));
    this.broker.metrics.inc(M.pubrelSent);
  }

  writable(): boolean {
    return this.conn.writable();
  }

  /** The socket caught up: send what the session queued meanwhile. */
  writableAgain(): void {
    if (this.state === "connected") this.session?.drain();
  }

  // ---- closing --------------------------------------------------------------------------------

  /** Server-initiated disconnect: DISCONNECT with `rc` to 5.0 clients [MQTT-3.14.0-1], then close. */
  kick(rc: number, reason: string): void {
    if (this.state === "disconnected") return;
    if (this.protoVer === 5 && this.state === "connected") {
      this.conn.send({ cmd: "disconnect", reasonCode: rc });
      this.broker.metrics.inc(M.disconnectSent);
    }
    this.close(reason);
  }

  close(reason: string, peerDone = false): void {
    this.conn.close(reason, peerDone);
  }

  /** Undecodable bytes: DISCONNECT 0x81 to a connected 5.0 client, then close [MQTT-4.13.1-1]. */
  malformed(detail: string): void {
    this.broker.logger.debug(
      { clientid: this.client.clientId, peer: this.client.peerHost, detail },
      "malformed packet",
    );
    this.kick(RC.MALFORMED_PACKET, "frame_error");
  }

  tooLarge(size: number): void {
    this.broker.logger.debug({ clientid: this.client.clientId, size }, "packet too large");
    this.kick(RC.PACKET_TOO_LARGE, "frame_too_large");
  }

  internalError(): void {
    this.kick(RC.IMPLEMENTATION_SPECIFIC_ERROR, "internal_error");
  }

  /** CONNECT with a protocol level we do not speak: CONNACK 0x01 (3.x form) [MQTT-3.1.2-2]. */
  refuseProtocolLevel(level: number): void {
    this.broker.metrics.inc(M.connectReceived);
    this.conn.protoVer = 4;
    this.conn.send({ cmd: "connack", returnCode: 1, sessionPresent: false });
    this.broker.metrics.inc(M.connackSent);
    this.broker.metrics.inc(M.connackError);
    this.broker.logger.debug({ level, peer: this.client.peerHost }, "unsupported protocol level");
    this.close("unsupported_protocol_version");
  }

  /** The socket is gone: publish the will if owed, park or end the session, tell the hooks. */
  closed(reason: string): void {
    const wasConnected = this.state === "connected";
    this.state = "disconnected";
    // Hand this connection's counters over to the node totals as it leaves the live set.
    this.broker.metrics.absorb(this.counters);
    this.broker.channels.delete(this);
    this.broker.timers.cancel(this);
    if (!wasConnected) return;
    this.broker.sessions.channelClosed(this, reason);
    this.broker.hooks.run("client.disconnected", this.client, reason);
  }

  /** The connection is open: from now on its keepalive is watched [MQTT-3.1.2-22]. */
  watchKeepalive(): void {
    if (this.keepalive > 0) this.broker.timers.schedule(this, this.lastRecv + this.keepaliveLimit() + 1);
    else this.broker.timers.cancel(this);
  }

  /** Silence after which the client is gone: 1.5x its keepalive (`keepalive_backoff` 0.75, doubled). */
  private keepaliveLimit(): number {
    return this.keepalive * 1000 * this.zone.keepaliveBackoff * 2;
  }

  /** Timer wheel: the idle timeout before CONNECT, or the keepalive deadline came [MQTT-3.1.2-22]. */
  due(now: number): void {
    const timers = this.broker.timers;
    if (this.state === "idle" || this.state === "authenticating") {
      if (now - this.createdAt > this.zone.idleTimeout) this.close("idle_timeout");
      else timers.schedule(this, this.createdAt + this.zone.idleTimeout + 1);
      return;
    }
    if (this.state !== "connected" || this.keepalive <= 0) return;
    const limit = this.keepaliveLimit();
    // A client this side does not read (ingress back-pressure, a hook's answer) is not silent.
    if (this.conn.readingHeld()) timers.schedule(this, now + limit);
    else if (now - this.lastRecv > limit) this.kick(RC.KEEP_ALIVE_TIMEOUT, "keepalive_timeout");
    else timers.schedule(this, this.lastRecv + limit + 1);
  }

  describeReason(rc: number): string {
    return reasonName(rc);
  }
}
