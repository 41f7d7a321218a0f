// The inter-node link's public surface: NodeLink (connections, forwarding, calls), its options and
// views, and LinkError. The wire format is documented in protocol.ts.

export type { LinkErrorCode } from "./errors.ts";
export { LinkError } from "./errors.ts";
export type { LinkOptions, LinkStats, PeerInfo } from "./link-types.ts";
export { NodeLink } from "./node-link.ts";
export { PROTOCOL_VERSION } from "./protocol.ts";
