// What the link knows about one other node: its address (empty when it only ever dialed us), the
// established connection and the outbound one being dialed, the outgoing queue, reconnect state
// and the calls waiting for its replies.

import { Backoff } from "./backoff.ts";
import type { Connection } from "./connection.ts";
import type { LinkError } from "./errors.ts";
import { type CallTicket, OutQueue } from "./out-queue.ts";

export interface PendingCall {
  ticket: CallTicket;
  method: string;
  resolve(v: unknown): void;
  reject(e: Error): void;
  timer: NodeJS.Timeout;
}

export class Peer {
  /** Established connection (at most one per pair). */
  conn: Connection | null = null;
  /** Outbound connection still in its handshake. */
  dialing: Connection | null = null;
  /** The socket refused more writes: wait for 'drain'. */
  blocked = false;
  /** Why the last attempt or connection failed; null once connected. */
  lastError: LinkError | null = null;
  retryTimer: NodeJS.Timeout | null = null;
  readonly queue: OutQueue;
  readonly pending = new Map<number, PendingCall>();
  readonly backoff: Backoff;

  constructor(
    readonly node: string,
    /** "host:port" to dial; "" for a node known only from its inbound connection. */
    public address: string,
    limits: { maxMessages: number; maxBytes: number; backoffMinMs: number; backoffMaxMs: number },
  ) {
    this.queue = new OutQueue(limits.maxMessages, limits.maxBytes);
    this.backoff = new Backoff(limits.backoffMinMs, limits.backoffMaxMs);
  }

  /** Added by addPeer (redialed when lost), rather than known from an inbound connection only. */
  get configured(): boolean {
    return this.address !== "";
  }

  /** Rejects (and cancels) the pending calls `which` selects with `err(method)`. */
  rejectCalls(which: (t: CallTicket) => boolean, err: (method: string) => LinkError): void {
    for (const [id, p] of this.pending) {
      if (!which(p.ticket)) continue;
      this.pending.delete(id);
      clearTimeout(p.timer);
      p.ticket.cancelled = true;
      p.reject(err(p.method));
    }
  }
}
