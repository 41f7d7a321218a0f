// Listener contracts: what a listener is configured with, what it hands the broker per
// accepted connection, and what it reports (spec 000 §2 "Listener").
import type { EventEmitter } from "node:events";
import type { TLSSocket } from "node:tls";

export type ListenerKind = "tcp" | "ssl" | "ws" | "wss";
export type ListenerProtocol = "mqtt:tcp" | "mqtt:ssl" | "mqtt:ws" | "mqtt:wss";

export interface PeerCert {
  cn?: string;
  dn?: string;
}

export interface ConnectionInfo {
  /** Listener identifier, e.g. "mqtt:tcp:external". */
  listener: string;
  protocol: ListenerProtocol;
  zone: string;
  peerHost: string;
  peerPort: number;
  sockPort: number;
  /** TLS client certificate subject, when the client presented one. */
  peerCert?: PeerCert;
}

/**
 * What a handler returns for a stream: it hears of the stream's 'error' and 'close' through the
 * listener's own listeners, so a socket carries one listener per event (a second one makes Node
 * keep an array of listeners per event per socket).
 */
export interface StreamOwner {
  /** The stream emitted 'error' ('close' follows). */
  streamError(): void;
  /** The stream closed: returns the reason the listener counts in shutdown_count. */
  streamClosed(): string;
}

/**
 * Called once per accepted connection; answers the stream's owner, which hears of its 'error' and
 * 'close' from the listener and, at the close, names the reason counted in shutdown_count
 * ("closed", "kicked", "keepalive_timeout", "idle_timeout", "protocol_error", "takeovered",
 * "discarded"...).
 */
export type ConnectionHandler = (stream: ByteStream, info: ConnectionInfo) => StreamOwner;

/**
 * The byte stream of one connection, as far as the broker uses it: a net or TLS socket (any
 * Duplex is one), or a WebSocket seen as a stream of bytes (ws-stream.ts). Events: 'data'
 * (a Buffer), 'drain', 'error', 'close', and 'end' where `allowHalfOpen` is not false.
 */
export interface ByteStream extends EventEmitter {
  write(chunk: Buffer): boolean;
  cork(): void;
  uncork(): void;
  pause(): unknown;
  resume(): unknown;
  /** Ends the writing side (the closing handshake of the layer, if it has one). */
  end(): unknown;
  destroy(): unknown;
  readonly destroyed: boolean;
  /** Bytes written and not yet handed to the operating system. */
  readonly writableLength: number;
  readonly allowHalfOpen?: boolean;
}

export interface ListenerSettings {
  kind: ListenerKind;
  name: string;
  /** port 0 = ephemeral. */
  bind: { host: string; port: number };
  zone: string;
  maxConnections: number;
  backlog: number;
  nodelay: boolean;
  keyfile?: string;
  certfile?: string;
  cacertfile?: string;
  verify: "verify_peer" | "verify_none";
  failIfNoPeerCert: boolean;
  /** e.g. ['tlsv1.3', 'tlsv1.2']. */
  tlsVersions: string[];
  /** OpenSSL names, ':' or ',' separated. */
  ciphers?: string;
  /** TLS-PSK (ssl): the key of a client's PSK identity, or null to refuse the handshake. */
  pskCallback?: (socket: TLSSocket, identity: string) => Buffer | null;
  /** e.g. '/mqtt'. */
  mqttPath: string;
  /** ms. */
  handshakeTimeout: number;
  /** Reported only (Node accepts on one loop); defaults per kind as in the reference broker. */
  acceptors?: number;
}

export interface ListenerInfo {
  protocol: ListenerProtocol;
  identifier: string;
  listen_on: string;
  acceptors: number;
  max_conns: number;
  current_conns: number;
  shutdown_count: Record<string, number> | [];
}

/** The logging a listener needs; a pino logger fits. */
export interface ListenerLogger {
  warn(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
}

export interface ListenerDeps {
  /** Where a generated self-signed certificate is kept (`<dataDir>/certs/`). */
  dataDir: string;
  logger: ListenerLogger;
}
