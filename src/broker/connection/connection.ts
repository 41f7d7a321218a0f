// Socket <-> channel: reads bytes, splits them into packets, feeds the channel in order (pausing
// the socket while the channel awaits an authentication or ACL answer), serializes what the channel
// sends and writes what a tick produced in one write. Bad bytes never throw out of here: they
// become an orderly close of this connection only.

import type { Packet } from "mqtt-packet";
import { readDirect } from "../../listeners/direct-read.ts";
import type { ByteStream, ConnectionInfo, StreamOwner } from "../../listeners/types.ts";
import { joinBytes } from "../../mqtt/bytes.ts";
import { decodeFrame, encodePacket } from "../../mqtt/codec.ts";
import { decodeFast, MALFORMED_FRAME } from "../../mqtt/fast-codec.ts";
import { decodeConnect } from "../../mqtt/fast-connect.ts";
import type { Channel } from "../channel/channel.ts";
import type { ConnectionPort, PacketTracer } from "../channel/port.ts";
import { readBegins, readDone } from "../clock.ts";
import { M, type Metrics } from "../metrics.ts";
import { connectProtocolLevel, FrameReader, MALFORMED, NEED_MORE, TOO_LARGE } from "./frame-reader.ts";
import { bytesRead } from "./read-pacing.ts";

/**
 * Write buffer size above which the socket takes no more QoS 0 deliveries: they wait in the
 * session's queue and their publishers are held (session.ts).
 */
const HIGH_WATERMARK = 4 * 1024 * 1024;

/**
 * A tick's packets up to this many bytes in all go out as one buffer (a copy of each, in Node's
 * buffer pool, which serves sizes under 4 KB); more go as one gathered write of the packets
 * themselves (no copy, no buffer of their size to allocate).
 */
const JOIN_MAX = 4095;

export interface ConnectionDeps {
  metrics: Metrics;
  /** Builds the channel for this connection (the broker's factory). */
  makeChannel(port: ConnectionPort, info: ConnectionInfo): Channel;
  onError(err: unknown): void;
}

export class Connection implements ConnectionPort, StreamOwner {
  protoVer = 4;
  tracer: PacketTracer | null = null;
  private readonly reader: FrameReader;
  private readonly channel: Channel;
  private backlog: Packet[] | null = null;
  private busy = false;
  private closing = false;
  private closeReason = "closed";
  /** What this tick wrote so far: the first packet, the ones after it, and their size. */
  private out: Buffer | null = null;
  private outMore: Buffer[] | null = null;
  private outBytes = 0;
  private sawConnect = false;
  /** True once the CONNECT was handed to the channel (the protocol version is known). */
  private sawConnack = false;
  /** A plain TCP socket: closing it needs no closing handshake of a layer above (TLS, WebSocket). */
  private readonly plainTcp: boolean;

  constructor(
    private readonly stream: ByteStream,
    info: ConnectionInfo,
    private readonly deps: ConnectionDeps,
  ) {
    this.reader = new FrameReader(1024 * 1024);
    this.plainTcp = info.protocol === "mqtt:tcp";
    this.channel = deps.makeChannel(this, info);
    // Module-level listeners find their Connection on the stream: no closures per connection.
    // 'error' and 'close' come through the listener's own listeners (StreamOwner), so the socket
    // keeps one function per event rather than an array.
    (stream as OwnedStream)[OWNER] = this;
    if (!readDirect(stream, onStreamData)) stream.on("data", onStreamData);
    // A stream that is not half-open (net and TLS sockets of a server) ends its side itself when
    // the peer's does (Node's own 'end' listener): a listener of ours there would only make Node
    // keep an array of 'end' listeners per socket.
    if ((stream as { allowHalfOpen?: boolean }).allowHalfOpen !== false) stream.on("end", onStreamEnd);
    stream.on("drain", onStreamDrain);
  }

  /** ECONNRESET and friends: the close event that follows does the cleanup. */
  streamError(): void {
    if (!this.closing) this.closeReason = "sock_error";
  }

  streamEnd(): void {
    if (!this.closing) this.closeReason = "closed";
    this.flush();
    this.stream.end();
  }

  /** The socket's write buffer drained: what waited for it can go out. */
  writableAgain(): void {
    if (!this.closing) this.channel.writableAgain();
  }

  /** End of the tick's writes: what they wrote goes to the stream (a close may have done it). */
  flush(): void {
    const first = this.out;
    if (first === null) return;
    const more = this.outMore;
    const bytes = this.outBytes;
    this.out = null;
    this.outMore = null;
    this.outBytes = 0;
    try {
      if (more === null) this.stream.write(first);
      else if (bytes <= JOIN_MAX) this.stream.write(joinBytes(first, more, bytes));
      else {
        this.stream.cork();
        this.stream.write(first);
        for (let i = 0; i < more.length; i++) this.stream.write(more[i]);
        this.stream.uncork();
      }
    } catch (err) {
      this.deps.onError(err);
    }
  }

  setMaxInbound(bytes: number): void {
    this.reader.maxPacketSize = bytes;
  }

  onData(chunk: Buffer): void {
    this.channel.bytesIn(chunk.length);
    bytesRead(chunk.length);
    if (this.closing) return;
    this.reader.push(chunk);
    // One clock read for every packet of the chunk (clock.ts).
    const outer = readBegins();
    try {
      this.pump();
    } finally {
      readDone(outer);
    }
  }

  private pump(): void {
    while (!this.busy && !this.closing) {
      const r = this.reader.next();
      if (typeof r === "number") {
        if (r === NEED_MORE) return;
        if (r === MALFORMED) this.onMalformed("bad remaining length");
        else if (r === TOO_LARGE) this.onTooLarge(this.reader.tooLargeSize);
        return;
      }
      if (!this.sawConnect) {
        this.sawConnect = true;
        // [MQTT-3.1.0-1] the first packet must be CONNECT.
        if ((r[0] & 0xf0) !== 0x10) {
          this.onMalformed("first packet is not CONNECT");
          return;
        }
        const level = connectProtocolLevel(r);
        if (level !== 3 && level !== 4 && level !== 5) {
          this.channel.refuseProtocolLevel(level);
          return;
        }
      }
      // The message path (PUBLISH, acks, PINGREQ) and the common CONNECT are decoded by hand; the
      // rest by mqtt-packet.
      const fast = this.sawConnack ? decodeFast(r, this.protoVer) : decodeConnect(r);
      if (fast === MALFORMED_FRAME) {
        this.onMalformed("malformed packet");
        return;
      }
      if (fast !== null) {
        this.onPacket(fast);
        continue;
      }
      // Before CONNACK too (an AUTH exchange), a packet other than CONNECT is read at the level the
      // CONNECT gave.
      const packet = decodeFrame(r, this.sawConnack || (r[0] & 0xf0) !== 0x10 ? this.protoVer : 0);
      if (packet instanceof Error) {
        this.onMalformed(packet.message);
        return;
      }
      this.onPacket(packet);
    }
  }

  private onPacket(p: Packet): void {
    if (this.closing) return;
    if (this.busy) {
      (this.backlog ??= []).push(p);
      return;
    }
    this.feed(p);
  }

  private feed(p: Packet): void {
    if (p.cmd === "connect") this.sawConnack = true;
    if (this.tracer !== null) this.tracer.packetIn(p);
    let r: void | Promise<void>;
    try {
      r = this.channel.handleIn(p);
    } catch (err) {
      this.deps.onError(err);
      this.channel.internalError();
      return;
    }
    if (r instanceof Promise) {
      this.busy = true;
      this.stream.pause();
      r.catch((err: unknown) => {
        this.deps.onError(err);
        this.channel.internalError();
      }).finally(() => this.resume());
    }
  }

  private resume(): void {
    this.busy = false;
    this.channel.readingResumed();
    while (this.backlog !== null && this.backlog.length > 0 && !this.busy && !this.closing) {
      const p = this.backlog.shift() as Packet;
      this.feed(p);
    }
    if (this.busy || this.closing) return;
    this.backlog = null;
    this.stream.resume();
    this.pump();
  }

  private onMalformed(detail: string): void {
    if (this.closing) return;
    this.deps.metrics.inc(M.packetsMalformed);
    this.channel.malformed(detail);
  }

  private onTooLarge(size: number): void {
    if (this.closing) return;
    this.channel.tooLarge(size);
  }

  send(packet: Packet): number {
    if (this.closing && this.stream.destroyed) return 0;
    const buf = encodePacket(packet, this.protoVer);
    if (this.tracer !== null) this.tracer.packetOut(packet);
    this.write(buf);
    return buf.length;
  }

  sendBytes(bytes: Buffer): void {
    if (this.closing && this.stream.destroyed) return;
    if (this.tracer !== null) this.tracer.bytesOut(bytes);
    this.write(bytes);
  }

  private write(buf: Buffer): void {
    this.channel.bytesOut(buf.length);
    if (this.out === null) {
      this.out = buf;
      if (pendingNow.push(this) === 1) process.nextTick(flushAll);
    } else if (this.outMore === null) this.outMore = [buf];
    else this.outMore.push(buf);
    this.outBytes += buf.length;
  }

  writable(): boolean {
    return this.stream.writableLength + this.outBytes < HIGH_WATERMARK;
  }

  readingHeld(): boolean {
    return this.busy;
  }

  bufferedBytes(): number {
    return this.stream.writableLength + this.outBytes;
  }

  close(reason: string, peerDone = false): void {
    if (this.closing) return;
    this.closing = true;
    this.closeReason = reason;
    this.reader.clear();
    this.backlog = null;
    this.flush();
    // The client sent DISCONNECT and everything written is with the operating system: closing the
    // socket sends the FIN that shutting down its side would, without the shutdown, the extra turn
    // of the loop and the grace timer (the common end of a connection).
    if (peerDone && this.plainTcp && this.stream.writableLength === 0) {
      this.stream.destroy();
      return;
    }
    this.stream.end();
    // A peer that never reads would keep the socket half-open: destroy once the flush is done or
    // after a short grace period.
    const t = setTimeout(() => this.stream.destroy(), 5000);
    t.unref();
    this.stream.once("close", () => clearTimeout(t));
  }

  /** The stream closed: the channel winds down; the reason is what the listener counts. */
  streamClosed(): string {
    this.closing = true;
    this.channel.closed(this.closeReason);
    return this.closeReason;
  }
}

const OWNER = Symbol("svc.connection");
type OwnedStream = ByteStream & { [OWNER]: Connection };

function onStreamData(this: OwnedStream, chunk: Buffer): void {
  this[OWNER].onData(chunk);
}
function onStreamEnd(this: OwnedStream): void {
  this[OWNER].streamEnd();
}
function onStreamDrain(this: OwnedStream): void {
  this[OWNER].writableAgain();
}
// The connections that wrote in this tick: one nextTick flushes them all (a publish fanned out to
// many subscribers schedules one callback, not one per subscriber). Two arrays, swapped, so that a
// connection writing while they are flushed waits for the next round.
let pendingNow: Connection[] = [];
let pendingSpare: Connection[] = [];

function flushAll(): void {
  const list = pendingNow;
  pendingNow = pendingSpare;
  for (let i = 0; i < list.length; i++) list[i].flush();
  list.length = 0;
  pendingSpare = list;
}
