// The inter-node link of one node: listens on `rpc.tcp_server_port` (TCP, or TLS), keeps one
// authenticated connection per peer (dialing with backoff, see connection.ts for the handshake),
// batches forwarded messages per peer (one FORWARD frame per event-loop turn or per 64 KiB, in
// order, bounded queue, socket backpressure respected), carries request/response calls with
// timeouts, pings idle connections and drops dead ones. A peer that misbehaves loses its
// connection (and reconnects), never crashes the node.
//
// One connection per pair: when both nodes dial each other at once, the connection dialed by the
// node with the smaller name wins. The acceptor decides before any data flows (REFUSE duplicate,
// or it abandons its own dial), so no frame is ever written on a connection that is then
// dropped as a duplicate; queued messages stay in the peer's queue until written on the winner.

import net from "node:net";
import tls from "node:tls";
import type { Message } from "../../broker/types.ts";
import type { Logger } from "../../telemetry/logger.ts";
import { Connection, type ConnectionOwner } from "./connection.ts";
import { LinkError } from "./errors.ts";
import { type KeepaliveTiming, sweepConnections } from "./keepalive.ts";
import { createLinkServer } from "./link-server.ts";
import { type LinkOptions, type LinkStats, MISMATCH, type PeerInfo, parseAddress } from "./link-types.ts";
import { decodeMessage } from "./message-codec.ts";
import type { CallTicket } from "./out-queue.ts";
import { Peer } from "./peer.ts";
import { PeerWriter } from "./peer-writer.ts";
import { decodeCall, decodeReply, encodeCall, encodeReply, Kind, PING, type RefuseReason } from "./protocol.ts";
import { runCall } from "./run-call.ts";
import { type BufReader, WireError } from "./wire.ts";

export type { LinkOptions, LinkStats, PeerInfo } from "./link-types.ts";

export class NodeLink implements ConnectionOwner {
  readonly nodeName: string;
  readonly cookie: string;
  private readonly log: Logger;
  private readonly timing: KeepaliveTiming;
  private readonly limits: { maxMessages: number; maxBytes: number; backoffMinMs: number; backoffMaxMs: number };
  private server: net.Server | null = null;
  private boundPort = 0;
  private readonly peerMap = new Map<string, Peer>();
  /** Every open connection, in handshake or established. */
  private readonly conns = new Set<Connection>();
  private sweepTimer: NodeJS.Timeout | null = null;
  private stopped = false;
  private callSeq = 0;
  private readonly counters: LinkStats = {
    forwardedOut: 0,
    forwardedIn: 0,
    dropped: 0,
    framesOut: 0,
    framesIn: 0,
    bytesOut: 0,
    bytesIn: 0,
    callsOut: 0,
    callsIn: 0,
    connections: 0,
  };
  private readonly writer = new PeerWriter(this.counters);

  constructor(private readonly opts: LinkOptions) {
    if (opts.nodeName === "") throw new Error("NodeLink needs a node name");
    this.nodeName = opts.nodeName;
    this.cookie = opts.cookie;
    this.log = opts.logger;
    const pingMs = opts.pingIntervalMs ?? 3000;
    const deadMs = opts.deadAfterMs ?? pingMs * 3 + 1000;
    this.timing = { pingMs, deadMs, handshakeMs: opts.handshakeTimeoutMs ?? 5000, probeMs: Math.min(deadMs, 1000) };
    this.limits = {
      maxMessages: opts.maxQueueMessages ?? 10_000,
      maxBytes: opts.maxQueueBytes ?? 16 * 1024 * 1024,
      backoffMinMs: opts.backoffMinMs ?? 100,
      backoffMaxMs: opts.backoffMaxMs ?? 5000,
    };
  }

  /** The bound port, after start(). */
  get port(): number {
    return this.boundPort;
  }

  async start(): Promise<void> {
    if (this.server !== null) return;
    const t = this.opts.tls;
    const server = createLinkServer(t, (sock) => this.accept(sock), this.log);
    this.server = server;
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen({ host: this.opts.bind.host, port: this.opts.bind.port }, () => {
        server.off("error", reject);
        resolve();
      });
    });
    server.on("error", (err: Error) => this.log.error({ err: err.message }, "inter-node listener error"));
    this.boundPort = (server.address() as net.AddressInfo).port;
    const sweepMs = Math.max(20, Math.min(1000, Math.floor(this.timing.pingMs / 2)));
    this.sweepTimer = setInterval(() => this.sweep(), sweepMs);
    this.sweepTimer.unref();
    this.log.info(
      { host: this.opts.bind.host, port: this.boundPort, tls: t !== undefined },
      "inter-node link listening",
    );
  }

  /** Keeps a connection to `node` at `address` ("host:port"), reconnecting with backoff until removePeer. Idempotent. */
  addPeer(node: string, address: string): void {
    if (this.stopped || node === this.nodeName) return;
    if (parseAddress(address) === null) {
      this.log.error({ peer: node, address }, "inter-node address is not host:port");
      return;
    }
    const peer = this.peerMap.get(node);
    if (peer === undefined) {
      const p = new Peer(node, address, this.limits);
      this.peerMap.set(node, p);
      this.dial(p);
      return;
    }
    if (peer.address === address) return;
    peer.address = address;
    if (peer.conn === null && peer.dialing === null) {
      if (peer.retryTimer !== null) clearTimeout(peer.retryTimer);
      peer.retryTimer = null;
      this.dial(peer);
    }
  }

  /** Forgets `node`: closes its connection, discards its queue, rejects its pending calls. */
  removePeer(node: string): void {
    const peer = this.peerMap.get(node);
    if (peer === undefined) return;
    const wasUp = peer.conn !== null;
    this.dropPeer(peer, new LinkError("closed", `peer ${node} was removed`));
    for (const c of [peer.conn, peer.dialing]) {
      if (c === null) continue;
      c.superseded = true;
      c.fail("closed", `peer ${node} was removed`);
    }
    peer.conn = null;
    peer.dialing = null;
    if (wasUp) {
      this.log.info({ peer: node }, "inter-node link down (peer removed)");
      this.notifyPeer(node, false);
    }
  }

  /**
   * Queues `msg` for `node`: batched per peer, delivered in order. False (a drop is counted) when
   * the peer is unknown or its queue is full. While the peer is down, messages wait in the queue.
   */
  forward(node: string, msg: Message): boolean {
    const peer = this.stopped ? undefined : this.peerMap.get(node);
    if (peer === undefined) {
      this.counters.dropped++;
      return false;
    }
    let enc: Buffer;
    try {
      enc = this.writer.encode(msg);
    } catch (err) {
      this.counters.dropped++;
      this.log.warn({ peer: node, topic: msg.topic, err: (err as Error).message }, "message not forwardable");
      return false;
    }
    if (!peer.queue.fits(enc.length)) {
      this.counters.dropped++;
      return false;
    }
    peer.queue.pushMessage(enc);
    // A full 64 KB batch goes out at once rather than at the end of the event-loop turn, so a
    // turn that reads many publishes does not fill the bounded queue before anything is written.
    if (peer.queue.hasSealed && !peer.blocked) this.writer.flushSealed(peer);
    this.writer.markDirty(peer);
    return true;
  }

  /**
   * Request/response to `node`; rejects with a LinkError after `timeoutMs` ("timeout"), when the
   * peer is unknown or unreachable ("unreachable", or the handshake's refusal: "cookie_mismatch",
   * "version_mismatch", "node_mismatch"), when the remote handler throws ("remote_error") or on
   * stop/removePeer ("closed"). Calls and replies travel in order with forwarded messages.
   */
  call(node: string, method: string, args: unknown, timeoutMs = 5000): Promise<unknown> {
    if (this.stopped) return Promise.reject(new LinkError("closed", "the inter-node link is stopped"));
    const peer = this.peerMap.get(node);
    if (peer === undefined) return Promise.reject(new LinkError("unreachable", `${node} is not a known peer`));
    // Not connected and no attempt under way (backoff after a failure): fail at once. During an
    // attempt (first dial, or a redial in progress) the call waits for its outcome.
    if (peer.conn === null && peer.lastError !== null && peer.dialing === null) {
      const e = peer.lastError;
      return Promise.reject(
        new LinkError(MISMATCH.has(e.code) ? e.code : "unreachable", `${node} is unreachable: ${e.message}`),
      );
    }
    let json: string;
    try {
      json = JSON.stringify(args === undefined ? null : args) ?? "null";
    } catch (err) {
      return Promise.reject(err);
    }
    this.callSeq = (this.callSeq + 1) >>> 0;
    const id = this.callSeq;
    this.counters.callsOut++;
    return new Promise((resolve, reject) => {
      const ticket: CallTicket = { id, cancelled: false, sentOn: null };
      const timer = setTimeout(() => {
        peer.pending.delete(id);
        ticket.cancelled = true;
        reject(new LinkError("timeout", `call ${method} to ${node} got no reply in ${timeoutMs} ms`));
      }, timeoutMs);
      peer.pending.set(id, { ticket, method, resolve, reject, timer });
      peer.queue.pushControl(encodeCall(id, method, json), ticket);
      this.writer.markDirty(peer);
    });
  }

  /**
   * Stops reading from `node` (TCP back-pressure reaches its sender) until resumePeer: this node
   * cannot take more of its messages now. Pings wait too, so keep pauses short.
   */
  pausePeer(node: string): void {
    this.peerMap.get(node)?.conn?.socket.pause();
  }

  resumePeer(node: string): void {
    this.peerMap.get(node)?.conn?.socket.resume();
  }

  /** Messages waiting in `node`'s queue (0 when unknown): cheap, for back-pressure checks. */
  queuedMessages(node: string): number {
    return this.peerMap.get(node)?.queue.messages ?? 0;
  }

  peers(): PeerInfo[] {
    const out: PeerInfo[] = [];
    for (const p of this.peerMap.values()) {
      const info: PeerInfo = { node: p.node, address: p.address, connected: p.conn !== null, queued: p.queue.messages };
      if (p.conn !== null) info.direction = p.conn.role === "dialer" ? "out" : "in";
      if (p.conn === null && p.lastError !== null)
        info.lastError = { code: p.lastError.code, message: p.lastError.message };
      out.push(info);
    }
    return out;
  }

  /** Bytes waiting in a peer socket's write buffer (for busy_dist_port sysmon). */
  bufferedBytes(node: string): number {
    return this.peerMap.get(node)?.conn?.socket.writableLength ?? 0;
  }

  stats(): LinkStats {
    let bytesOut = this.counters.bytesOut;
    let bytesIn = this.counters.bytesIn;
    for (const c of this.conns) {
      bytesOut += c.bytesOut;
      bytesIn += c.bytesIn;
    }
    return { ...this.counters, bytesOut, bytesIn, connections: this.conns.size };
  }

  /** Closes the listener and every connection; pending calls reject with `closed`. onPeer is not called. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    if (this.sweepTimer !== null) clearInterval(this.sweepTimer);
    this.writer.stop();
    for (const peer of this.peerMap.values()) {
      if (peer.retryTimer !== null) clearTimeout(peer.retryTimer);
      peer.retryTimer = null;
      peer.rejectCalls(
        () => true,
        () => new LinkError("closed", "the inter-node link stopped"),
      );
      peer.queue.clear();
    }
    const conns = [...this.conns];
    for (const c of conns) {
      c.superseded = true;
      c.fail("closed", "the inter-node link stopped");
    }
    this.conns.clear();
    this.peerMap.clear();
    const server = this.server;
    if (server?.listening) await new Promise<void>((resolve) => server.close(() => resolve()));
    await Promise.all(conns.map((c) => c.done));
    this.log.info({}, "inter-node link stopped");
  }

  // ---- connections -----------------------------------------------------------------------------

  private accept(socket: net.Socket): void {
    if (this.stopped) {
      socket.destroy();
      return;
    }
    socket.setNoDelay(true);
    const conn = new Connection(socket, "acceptor", this, `${socket.remoteAddress}:${socket.remotePort}`);
    this.conns.add(conn);
  }

  private dial(peer: Peer): void {
    if (this.stopped || peer.conn !== null || peer.dialing !== null || !peer.configured) return;
    const addr = parseAddress(peer.address);
    if (addr === null) return;
    const t = this.opts.tls;
    const socket = t
      ? tls.connect({
          host: addr.host,
          port: addr.port,
          key: t.key,
          cert: t.cert,
          ca: t.ca,
          rejectUnauthorized: t.ca !== undefined,
          checkServerIdentity: () => undefined,
        })
      : net.connect({ host: addr.host, port: addr.port });
    socket.setNoDelay(true);
    const conn = new Connection(socket, "dialer", this, peer.address, peer.node, t ? "secureConnect" : "connect");
    this.conns.add(conn);
    peer.dialing = conn;
  }

  /** ConnectionOwner: the acceptor decides which connection of a pair lives. */
  admit(conn: Connection): { reason: RefuseReason; detail: string } | null {
    const peer = this.peerMap.get(conn.remote);
    if (peer === undefined) return null;
    const remoteIsSmaller = conn.remote < this.nodeName;
    if (peer.dialing !== null) {
      // Simultaneous dial: the connection dialed by the smaller name wins.
      if (!remoteIsSmaller) return { reason: "duplicate", detail: `${this.nodeName} is dialing ${conn.remote} itself` };
      const mine = peer.dialing;
      peer.dialing = null;
      mine.superseded = true;
      mine.fail("unreachable", "superseded by the peer's connection");
      return null;
    }
    const current = peer.conn;
    if (current !== null && current.role === "dialer" && !remoteIsSmaller) {
      // Ours is the preferred one. The peer redialing suggests it lost it (a restart whose close
      // we have not seen), or this is a late duplicate of a simultaneous dial: keep ours, and
      // probe it so that a dead one is dropped soon and the peer's retry gets through.
      if (current.probeSince === 0) {
        current.probeSince = Date.now();
        current.send(PING);
      }
      return { reason: "duplicate", detail: "a link between these nodes already exists" };
    }
    // Otherwise the peer dialed again because it lost the current connection: replace it.
    return null;
  }

  /** ConnectionOwner: a connection completed its handshake. */
  established(conn: Connection): void {
    if (this.stopped) {
      conn.fail("closed", "the inter-node link stopped");
      return;
    }
    const node = conn.remote;
    let peer = this.peerMap.get(node);
    if (conn.role === "dialer") {
      if (peer === undefined || peer.dialing !== conn) {
        conn.superseded = true;
        conn.fail("unreachable", "connection no longer wanted");
        return;
      }
      peer.dialing = null;
    } else {
      if (peer === undefined) {
        peer = new Peer(node, "", this.limits);
        this.peerMap.set(node, peer);
      }
      if (peer.dialing !== null) {
        const mine = peer.dialing;
        peer.dialing = null;
        mine.superseded = true;
        mine.fail("unreachable", "superseded by the peer's connection");
      }
    }
    const old = peer.conn;
    if (old !== null) {
      peer.conn = null;
      old.superseded = true;
      this.lost(peer, old, "replaced by a new connection");
      old.fail("unreachable", "replaced by a new connection");
    }
    peer.conn = conn;
    peer.blocked = false;
    peer.lastError = null;
    peer.backoff.reset();
    if (peer.retryTimer !== null) clearTimeout(peer.retryTimer);
    peer.retryTimer = null;
    this.log.info(
      { peer: node, address: conn.address, direction: conn.role === "dialer" ? "out" : "in" },
      "inter-node link up",
    );
    this.notifyPeer(node, true);
    this.writer.markDirty(peer);
  }

  /** ConnectionOwner: a frame after the handshake. WireError closes the connection. */
  frame(conn: Connection, kind: number, r: BufReader): void {
    const peer = this.peerMap.get(conn.remote);
    if (peer === undefined || peer.conn !== conn) return;
    switch (kind) {
      case Kind.forward: {
        const n = r.u32();
        if (n > r.remaining) throw new WireError(`batch of ${n} messages in ${r.remaining} bytes`);
        const msgs: Message[] = new Array(n);
        for (let i = 0; i < n; i++) msgs[i] = decodeMessage(r);
        r.done();
        this.counters.framesIn++;
        this.counters.forwardedIn += n;
        try {
          this.opts.onForward(conn.remote, msgs);
        } catch (err) {
          this.log.error({ peer: conn.remote, err: (err as Error).message }, "delivering forwarded messages failed");
        }
        return;
      }
      case Kind.call: {
        const c = decodeCall(r);
        this.counters.framesIn++;
        this.counters.callsIn++;
        this.answer(conn.remote, c.id, c.method, c.args);
        return;
      }
      case Kind.reply: {
        const rep = decodeReply(r);
        this.counters.framesIn++;
        const p = peer.pending.get(rep.id);
        if (p === undefined) return; // timed out already
        peer.pending.delete(rep.id);
        clearTimeout(p.timer);
        if (rep.ok) p.resolve(rep.body);
        else {
          const b = (rep.body ?? {}) as { message?: unknown; code?: unknown };
          const message = typeof b.message === "string" ? b.message : "remote error";
          const code = typeof b.code === "string" ? b.code : undefined;
          p.reject(new LinkError("remote_error", `${conn.remote}: ${p.method} failed: ${message}`, { message, code }));
        }
        return;
      }
      default:
        throw new WireError(`unknown frame kind 0x${kind.toString(16)}`);
    }
  }

  /** ConnectionOwner: the socket drained. */
  drained(conn: Connection): void {
    const peer = this.peerMap.get(conn.remote);
    if (peer === undefined || peer.conn !== conn) return;
    peer.blocked = false;
    this.writer.flushPeer(peer);
  }

  /** ConnectionOwner: a connection closed (once per connection). */
  closed(conn: Connection, err: LinkError): void {
    this.conns.delete(conn);
    this.counters.bytesIn += conn.bytesIn;
    this.counters.bytesOut += conn.bytesOut;
    if (this.stopped) return;
    const peer = conn.remote === "" ? undefined : this.peerMap.get(conn.remote);
    if (peer === undefined) {
      if (!conn.superseded) this.report(conn.remote || conn.address, err, false);
      return;
    }
    if (peer.dialing === conn) {
      peer.dialing = null;
      if (!conn.superseded) this.attemptFailed(peer, err);
      this.scheduleRetry(peer);
      return;
    }
    if (peer.conn === conn) {
      peer.conn = null;
      peer.blocked = false;
      this.writer.forget(peer);
      peer.lastError = new LinkError(err.code, `link lost: ${err.message}`);
      if (err.code === "protocol_error") this.log.warn({ peer: peer.node, err: err.message }, "inter-node link closed");
      this.lost(peer, conn, err.message);
      if (peer.configured) this.scheduleRetry(peer);
      else this.dropPeer(peer, new LinkError("unreachable", `link to ${peer.node} lost: ${err.message}`));
      return;
    }
    // An inbound connection of a known peer that failed its handshake.
    if (!conn.superseded) {
      this.report(peer.node, err, false);
      if (peer.conn === null && MISMATCH.has(err.code)) peer.lastError = err;
    }
  }

  // ---- peers -----------------------------------------------------------------------------------

  /** A dial attempt failed: remember why, fail the calls waiting for it, say so once. */
  private attemptFailed(peer: Peer, err: LinkError): void {
    const repeated = peer.lastError !== null && peer.lastError.message === err.message;
    peer.lastError = err;
    const code = MISMATCH.has(err.code) ? err.code : "unreachable";
    peer.rejectCalls(
      () => true,
      () => new LinkError(code, `${peer.node} is unreachable: ${err.message}`),
    );
    this.report(peer.node, err, repeated);
  }

  private report(node: string, err: LinkError, repeated: boolean): void {
    const refused = MISMATCH.has(err.code) || err.code === "protocol_error";
    const fields = { peer: node, code: err.code, err: err.message };
    if (repeated) this.log.debug(fields, "inter-node link attempt failed");
    else if (refused) this.log.warn(fields, "inter-node link refused");
    else this.log.info(fields, "inter-node link attempt failed");
    if (refused) {
      try {
        this.opts.onLinkError?.(node, err);
      } catch (e) {
        this.log.error({ err: (e as Error).message }, "onLinkError failed");
      }
    }
  }

  /** The established connection `conn` of `peer` is gone. */
  private lost(peer: Peer, conn: Connection, why: string): void {
    peer.rejectCalls(
      (t) => t.sentOn === conn,
      (method) => new LinkError("unreachable", `connection to ${peer.node} lost before ${method} replied (${why})`),
    );
    this.log.info({ peer: peer.node, reason: why }, "inter-node link down");
    this.notifyPeer(peer.node, false);
  }

  /** Forgets a peer: its queue is dropped (counted), its calls rejected. */
  private dropPeer(peer: Peer, err: LinkError): void {
    if (this.peerMap.get(peer.node) === peer) this.peerMap.delete(peer.node);
    if (peer.retryTimer !== null) clearTimeout(peer.retryTimer);
    peer.retryTimer = null;
    this.writer.forget(peer);
    const { messages } = peer.queue.clear();
    this.counters.dropped += messages;
    peer.rejectCalls(
      () => true,
      () => new LinkError(err.code, err.message),
    );
  }

  private scheduleRetry(peer: Peer): void {
    if (this.stopped || !peer.configured || peer.conn !== null || peer.dialing !== null) return;
    if (peer.retryTimer !== null || this.peerMap.get(peer.node) !== peer) return;
    peer.retryTimer = setTimeout(() => {
      peer.retryTimer = null;
      this.dial(peer);
    }, peer.backoff.next());
    peer.retryTimer.unref();
  }

  private notifyPeer(node: string, up: boolean): void {
    try {
      this.opts.onPeer?.(node, up);
    } catch (err) {
      this.log.error({ peer: node, err: (err as Error).message }, "onPeer failed");
    }
  }

  /** Runs a call from `from` and queues the reply (in order with forwarded messages). */
  private answer(from: string, id: number, method: string, args: unknown): void {
    runCall(this.opts.onCall, from, method, args, (status, json) => {
      const peer = this.peerMap.get(from);
      if (this.stopped || peer === undefined || peer.conn === null) return; // the caller hears "unreachable"
      peer.queue.pushControl(encodeReply(id, status, json));
      this.writer.markDirty(peer);
    });
  }

  // ---- keepalive -------------------------------------------------------------------------------

  private sweep(): void {
    sweepConnections(this.conns, Date.now(), this.timing);
  }
}
