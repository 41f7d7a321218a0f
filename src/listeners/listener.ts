// The Listener role (start, stop, report) and its one implementation over a node:net server.
// Each kind (tcp, ssl, ws, wss) is a Transport that builds the server and routes accepted
// connections into the shared ConnectionBook; binding, stopping and reporting live here once.
import type { AddressInfo, Server, Socket } from "node:net";
import { ConnectionBook } from "./connection-book.ts";
import type {
  ConnectionHandler,
  ListenerDeps,
  ListenerInfo,
  ListenerKind,
  ListenerLogger,
  ListenerProtocol,
  ListenerSettings,
} from "./types.ts";

export interface Listener {
  /** e.g. "mqtt:tcp:external". */
  readonly identifier: string;
  readonly protocol: ListenerProtocol;
  /** Bound port once started (the configured one before that). */
  readonly port: number;
  address(): { host: string; port: number };
  /** Binds; resolves once listening. */
  start(): Promise<void>;
  /** Stops accepting and destroys the connections still held. */
  stop(): Promise<void>;
  info(): ListenerInfo;
}

/** How one kind of listener builds its (not yet listening) server. */
export interface Transport {
  createServer(book: ConnectionBook): Promise<Server>;
}

export class ListenerError extends Error {
  override name = "ListenerError";
}

/** The listener's socket set, on each accepted socket. */
const SOCKET_SET = Symbol("listener.sockets");
type TrackedSocket = Socket & { [SOCKET_SET]?: Set<Socket> };

function ignoreSocketError(): void {}

function untrackSocket(this: TrackedSocket): void {
  this[SOCKET_SET]?.delete(this);
}

/** Acceptor counts reported per kind (the reference broker's defaults; Node has one accept loop). */
const DEFAULT_ACCEPTORS: Record<ListenerKind, number> = { tcp: 8, ssl: 16, ws: 4, wss: 4 };

export function protocolOf(kind: ListenerKind): ListenerProtocol {
  return `mqtt:${kind}`;
}

export function identifierOf(settings: Pick<ListenerSettings, "kind" | "name">): string {
  return `${protocolOf(settings.kind)}:${settings.name}`;
}

/** "1883" for a wildcard address, else "<host>:<port>" (as listen_on is reported). */
export function formatListenOn(host: string, port: number): string {
  if (host === "0.0.0.0" || host === "::" || host === "") return String(port);
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

export class ServerListener implements Listener {
  readonly identifier: string;
  readonly protocol: ListenerProtocol;
  readonly #settings: ListenerSettings;
  readonly #transport: Transport;
  readonly #logger: ListenerLogger;
  readonly #book: ConnectionBook;
  readonly #sockets = new Set<Socket>();
  #server: Server | undefined;

  constructor(settings: ListenerSettings, handler: ConnectionHandler, deps: ListenerDeps, transport: Transport) {
    this.#settings = settings;
    this.#transport = transport;
    this.#logger = deps.logger;
    this.protocol = protocolOf(settings.kind);
    this.identifier = identifierOf(settings);
    this.#book = new ConnectionBook({
      listener: this.identifier,
      protocol: this.protocol,
      zone: settings.zone,
      maxConnections: settings.maxConnections,
      handler,
      logger: deps.logger,
    });
  }

  get port(): number {
    const bound = this.#server?.address();
    return bound !== null && typeof bound === "object" ? (bound as AddressInfo).port : this.#settings.bind.port;
  }

  address(): { host: string; port: number } {
    return { host: this.#settings.bind.host, port: this.port };
  }

  async start(): Promise<void> {
    if (this.#server !== undefined) throw new ListenerError(`${this.identifier} is already started`);
    const server = await this.#transport.createServer(this.#book);
    // Every raw socket the book does not hold is tracked so stop() can end even those still in a
    // handshake.
    server.on("connection", (socket: Socket) => this.#track(socket));
    const { host, port } = this.#settings.bind;
    await new Promise<void>((resolve, reject) => {
      const onError = (err: Error): void => {
        reject(new ListenerError(`${this.identifier} cannot listen on ${host}:${port}`, { cause: err }));
      };
      server.once("error", onError);
      server.listen({ host, port, backlog: this.#settings.backlog }, () => {
        server.off("error", onError);
        resolve();
      });
    });
    server.on("error", (err: Error) => this.#logger.warn({ err, listener: this.identifier }, "listener error"));
    this.#server = server;
    const a = this.address();
    this.#logger.info({ listener: this.identifier, host: a.host, port: a.port }, "listener started");
  }

  async stop(): Promise<void> {
    const server = this.#server;
    if (server === undefined) return;
    this.#server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    this.#book.destroyAll();
    for (const socket of this.#sockets) socket.destroy();
    await closed;
    this.#logger.info({ listener: this.identifier }, "listener stopped");
  }

  info(): ListenerInfo {
    return {
      protocol: this.protocol,
      identifier: this.identifier,
      listen_on: formatListenOn(this.#settings.bind.host, this.port),
      acceptors: this.#settings.acceptors ?? DEFAULT_ACCEPTORS[this.#settings.kind],
      max_conns: this.#book.maxConnections,
      current_conns: this.#book.current,
      shutdown_count: this.#book.shutdownCount(),
    };
  }

  #track(socket: Socket): void {
    // A socket the book already holds (plain TCP: the transport handed it first) has the book's
    // 'error' and 'close' listeners, and stop() reaches it through the book: a second pair would
    // only make Node keep an array of listeners per event on every connection.
    if (this.#book.holds(socket)) return;
    // ECONNRESET and friends must never reach the process as an unhandled 'error'. Module-level
    // listeners: no closures per socket.
    socket.on("error", ignoreSocketError);
    this.#sockets.add(socket);
    (socket as TrackedSocket)[SOCKET_SET] = this.#sockets;
    socket.on("close", untrackSocket);
  }
}
