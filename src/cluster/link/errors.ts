// Errors of the inter-node link: one class, LinkError, with a machine-readable `code` callers
// switch on (a join refused for a wrong cookie, a call that timed out, a peer that is down...).

export type LinkErrorCode =
  /** A call got no reply in time. */
  | "timeout"
  /** The peer is unknown, down, or its connection was lost before the reply came. */
  | "unreachable"
  /** The peer proved another cookie (or could not prove ours): the pair refuses to link. */
  | "cookie_mismatch"
  /** The peer speaks another version of the inter-node protocol. */
  | "version_mismatch"
  /** The peer at the address is not the node we expected (or is ourselves). */
  | "node_mismatch"
  /** The peer broke the protocol (bad frame, bad handshake step). */
  | "protocol_error"
  /** The remote call handler threw; `remote` holds its message and code. */
  | "remote_error"
  /** The link was stopped, or the peer removed, while the operation was pending. */
  | "closed";

export class LinkError extends Error {
  override readonly name = "LinkError";

  constructor(
    readonly code: LinkErrorCode,
    message: string,
    /** For `remote_error`: what the remote handler threw. */
    readonly remote?: { message: string; code?: string },
  ) {
    super(message);
  }
}
