// Address pair of an accepted socket, read from the socket itself (never from headers such as
// X-Forwarded-For: a listener trusts nothing the client says about where it comes from).
import type { Socket } from "node:net";

export interface Endpoints {
  peerHost: string;
  peerPort: number;
  sockHost: string;
  sockPort: number;
}

/** IPv4 peers on a dual-stack socket show up as "::ffff:a.b.c.d"; report the IPv4 form. */
export function normalizeHost(host: string): string {
  return host.startsWith("::ffff:") && host.includes(".") ? host.slice(7) : host;
}

/** The socket's endpoints, or undefined when it is already gone (reset before we looked). */
export function endpointsOf(socket: Socket): Endpoints | undefined {
  const { remoteAddress, remotePort, localAddress, localPort } = socket;
  if (remoteAddress === undefined || remotePort === undefined) return undefined;
  return {
    peerHost: normalizeHost(remoteAddress),
    peerPort: remotePort,
    sockHost: normalizeHost(localAddress ?? ""),
    sockPort: localPort ?? 0,
  };
}
