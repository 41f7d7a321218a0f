// The inter-node link's options and views (what NodeLink is configured with and reports), and the
// `host:port` address parsing its peers use.

import type { Message } from "../../broker/types.ts";
import type { Logger } from "../../telemetry/logger.ts";
import type { LinkError, LinkErrorCode } from "./errors.ts";

export interface LinkOptions {
  nodeName: string;
  cookie: string;
  /** Where to listen; port 0 = ephemeral (see `port` after start). */
  bind: { host: string; port: number };
  /**
   * Optional TLS on the link, both directions (each node is server and client). With `ca`, peers'
   * certificates must chain to it (client certificates required too; host names are not checked:
   * node names need not match certificate names). Without it, TLS only encrypts. Either way the
   * cookie handshake authenticates the peer.
   */
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer };
  logger: Logger;
  /** Messages another node forwarded here (deliver locally only). */
  onForward(from: string, msgs: Message[]): void;
  /** Requests from another node; the returned value (JSON-able) goes back to the caller. */
  onCall(from: string, method: string, args: unknown): Promise<unknown>;
  /** A peer's link went up or down. */
  onPeer?(node: string, up: boolean): void;
  /** A handshake with `node` was refused, by either side (cookie, version or node mismatch...). */
  onLinkError?(node: string, err: LinkError): void;
  /** PING a connection that sent nothing for this long (default 3000 ms). */
  pingIntervalMs?: number;
  /** Close a connection that received nothing for this long (default 3 x ping + 1 s). */
  deadAfterMs?: number;
  /** Close a connection whose handshake has not completed after this long (default 5000 ms). */
  handshakeTimeoutMs?: number;
  /** Per-peer queue bounds (defaults 10 000 messages, 16 MiB). */
  maxQueueMessages?: number;
  maxQueueBytes?: number;
  /** Reconnect backoff (defaults 100 ms doubling to 5000 ms, with jitter). */
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

export interface PeerInfo {
  node: string;
  /** "" for a node known only from its inbound connection (not added by addPeer). */
  address: string;
  connected: boolean;
  /** Who dialed the established connection: "out" this node, "in" the peer. */
  direction?: "in" | "out";
  /** Messages waiting to be written to the peer. */
  queued: number;
  /** Why the last attempt or connection failed, while not connected. */
  lastError?: { code: LinkErrorCode; message: string };
}

export interface LinkStats {
  /** Messages written to peers' sockets. */
  forwardedOut: number;
  /** Messages received from peers. */
  forwardedIn: number;
  /** Messages refused (queue full, unknown peer) or discarded with a removed peer's queue. */
  dropped: number;
  /** Data frames written / read after the handshake (FORWARD batches, CALL, REPLY; no PINGs). */
  framesOut: number;
  framesIn: number;
  /** Bytes written / read on all connections. */
  bytesOut: number;
  bytesIn: number;
  callsOut: number;
  callsIn: number;
  /** Sockets open now (established or in their handshake). */
  connections: number;
}

export const MISMATCH: ReadonlySet<LinkErrorCode> = new Set(["cookie_mismatch", "version_mismatch", "node_mismatch"]);

export function parseAddress(address: string): { host: string; port: number } | null {
  const i = address.lastIndexOf(":");
  if (i <= 0) return null;
  let host = address.slice(0, i);
  if (host.startsWith("[") && host.endsWith("]")) host = host.slice(1, -1);
  const port = Number(address.slice(i + 1));
  if (!Number.isInteger(port) || port <= 0 || port > 65535) return null;
  return { host, port };
}
