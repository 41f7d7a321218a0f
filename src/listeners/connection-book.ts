// Per-listener connection accounting: enforces max_connections, hands admitted streams to the
// broker's handler, and tallies why connections ended (shutdown_count, spec 000 §2 "Listener").
import type { Endpoints } from "./endpoints.ts";
import type {
  ByteStream,
  ConnectionHandler,
  ConnectionInfo,
  ListenerLogger,
  ListenerProtocol,
  PeerCert,
  StreamOwner,
} from "./types.ts";

/** Reason counted when a connection is refused because the listener is full. */
export const MAX_CONNS_REASON = "max_conns";

/** A reserved slot: either handed a stream once, or cancelled (both idempotent). */
export interface Ticket {
  hand(stream: ByteStream, endpoints: Endpoints, peerCert?: PeerCert): void;
  cancel(): void;
}

export interface BookOptions {
  listener: string;
  protocol: ListenerProtocol;
  zone: string;
  maxConnections: number;
  handler: ConnectionHandler;
  logger: ListenerLogger;
}

/** The book holding a stream, and what its handler returned, on the stream itself. */
const BOOK = Symbol("connection-book.book");
const STREAM_OWNER = Symbol("connection-book.owner");
type BookedStream = ByteStream & { [BOOK]?: ConnectionBook; [STREAM_OWNER]?: StreamOwner | undefined };

// Module-level listeners, one per event: no closure per connection, and the handler's owner hears
// of 'error' and 'close' through them rather than through listeners of its own.
function onBookedError(this: BookedStream): void {
  // The broker owns error reporting; this listener also keeps 'error' from crashing the process.
  this[STREAM_OWNER]?.streamError();
}

function onBookedClose(this: BookedStream): void {
  this[BOOK]?.streamClosed(this);
}

export class ConnectionBook {
  readonly #opts: BookOptions;
  readonly #live = new Set<ByteStream>();
  readonly #shutdown = new Map<string, number>();
  /** Slots reserved for connections still in a handshake (WebSocket upgrade). */
  #pending = 0;

  constructor(opts: BookOptions) {
    this.#opts = opts;
  }

  get maxConnections(): number {
    return this.#opts.maxConnections;
  }

  /** Connections handed to the broker and not yet closed. */
  get current(): number {
    return this.#live.size;
  }

  /** Reserves a slot, or counts a `max_conns` refusal and returns undefined when full. */
  reserve(): Ticket | undefined {
    if (this.#live.size + this.#pending >= this.#opts.maxConnections) {
      this.count(MAX_CONNS_REASON);
      return undefined;
    }
    this.#pending++;
    let used = false;
    const use = (): boolean => {
      if (used) return false;
      used = true;
      this.#pending--;
      return true;
    };
    return {
      hand: (stream, endpoints, peerCert) => {
        if (use()) this.#hand(stream, endpoints, peerCert);
      },
      cancel: () => {
        use();
      },
    };
  }

  /** Admits an already established stream, or destroys it at once when the listener is full. */
  admit(stream: ByteStream, endpoints: Endpoints | undefined, peerCert?: PeerCert): void {
    if (endpoints === undefined) {
      stream.destroy();
      return;
    }
    const ticket = this.reserve();
    if (ticket === undefined) {
      stream.destroy();
      return;
    }
    ticket.hand(stream, endpoints, peerCert);
  }

  count(reason: string): void {
    this.#shutdown.set(reason, (this.#shutdown.get(reason) ?? 0) + 1);
  }

  /** An empty array when nothing was counted, else reason -> count (as the API reports it). */
  shutdownCount(): Record<string, number> | [] {
    return this.#shutdown.size === 0 ? [] : Object.fromEntries(this.#shutdown);
  }

  /** Destroys every stream still held; their owners then hear of the close and report why. */
  destroyAll(): void {
    for (const stream of this.#live) stream.destroy();
  }

  /** A held stream closed: it leaves the live set, and its StreamOwner reports why it ended. */
  streamClosed(stream: ByteStream): void {
    this.#live.delete(stream);
    const booked = stream as BookedStream;
    const owner = booked[STREAM_OWNER];
    if (owner === undefined) return;
    booked[STREAM_OWNER] = undefined;
    this.count(owner.streamClosed());
  }

  /** Whether `stream` was handed to the handler and has not closed yet. */
  holds(stream: ByteStream): boolean {
    return this.#live.has(stream);
  }

  #hand(stream: ByteStream, endpoints: Endpoints, peerCert: PeerCert | undefined): void {
    const { listener, protocol, zone, handler, logger } = this.#opts;
    const info: ConnectionInfo = { listener, protocol, zone, ...endpoints };
    if (peerCert !== undefined) info.peerCert = peerCert;
    stream.on("error", onBookedError);
    this.#live.add(stream);
    const booked = stream as BookedStream;
    booked[BOOK] = this;
    booked[STREAM_OWNER] = undefined;
    stream.on("close", onBookedClose);
    try {
      booked[STREAM_OWNER] = handler(stream, info);
    } catch (err) {
      logger.warn({ err, listener }, "connection handler threw; dropping connection");
      stream.destroy();
    }
  }
}
