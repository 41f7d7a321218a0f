// The writing side of the inter-node link: encodes forwarded messages (a message going to several
// peers is encoded once per event-loop turn), and writes each peer's queued frames on its
// connection, at the end of the turn or at once when a 64 KB batch is full, until the socket
// pushes back (the peer is then `blocked` until its connection drains).

import type { Message } from "../../broker/types.ts";
import type { LinkStats } from "./link-types.ts";
import { encodeMessage } from "./message-codec.ts";
import type { Peer } from "./peer.ts";
import { BufWriter } from "./wire.ts";

export class PeerWriter {
  private readonly dirty = new Set<Peer>();
  private immediate: NodeJS.Immediate | null = null;
  private scratch = new BufWriter(4096);
  private lastMsg: Message | null = null;
  private lastEncoded: Buffer = Buffer.alloc(0);
  private stopped = false;

  constructor(private readonly counters: LinkStats) {}

  /** The message's wire bytes (valid until the next encode); throws when it cannot be encoded. */
  encode(msg: Message): Buffer {
    if (msg === this.lastMsg) return this.lastEncoded;
    const w = this.scratch;
    w.pos = 0;
    encodeMessage(w, msg);
    const enc = w.view();
    this.lastMsg = msg;
    this.lastEncoded = enc;
    if (w.buf.length > 1024 * 1024) this.scratch = new BufWriter(4096);
    this.schedule();
    return enc;
  }

  /** The peer has something to write: at the end of this turn. */
  markDirty(peer: Peer): void {
    if (peer.conn === null || peer.blocked || peer.queue.empty) return;
    this.dirty.add(peer);
    this.schedule();
  }

  forget(peer: Peer): void {
    this.dirty.delete(peer);
  }

  private schedule(): void {
    if (this.immediate === null && !this.stopped) this.immediate = setImmediate(() => this.flushAll());
  }

  private flushAll(): void {
    this.immediate = null;
    this.lastMsg = null;
    for (const peer of this.dirty) this.flushPeer(peer);
    this.dirty.clear();
  }

  /** Writes the peer's sealed frames (not the open batch) until the socket pushes back. */
  flushSealed(peer: Peer): void {
    const conn = peer.conn;
    if (conn === null || !conn.open) return;
    while (peer.queue.hasSealed) {
      const f = peer.queue.shift();
      if (f === undefined) return;
      if (f.call !== undefined) {
        if (f.call.cancelled) continue;
        f.call.sentOn = conn;
      }
      const ok = conn.send(f.buf);
      this.counters.framesOut++;
      this.counters.forwardedOut += f.msgs;
      if (!ok) {
        peer.blocked = true;
        return;
      }
    }
  }

  /** Writes the peer's queue, open batch included, until it is empty or the socket pushes back. */
  flushPeer(peer: Peer): void {
    if (peer.blocked) return;
    peer.queue.seal();
    this.flushSealed(peer);
  }

  stop(): void {
    this.stopped = true;
    if (this.immediate !== null) clearImmediate(this.immediate);
    this.immediate = null;
    this.dirty.clear();
  }
}
