// Address pair of an accepted socket, read from the socket itself (never from headers such as
// X-Forwarded-For: a listener trusts nothing the client says about where it comes from). The local
// port of an accepted socket is the port its server listens on, read once per server rather than
// once per connection (a getsockname call each).
import type { AddressInfo, Server, Socket } from "node:net";

export interface Endpoints {
  peerHost: string;
  peerPort: number;
  sockPort: number;
}

/** IPv4 peers on a dual-stack socket show up as "::ffff:a.b.c.d"; report the IPv4 form. */
export function normalizeHost(host: string): string {
  return host.startsWith("::ffff:") && host.includes(".") ? host.slice(7) : host;
}

const PORT = Symbol("listener.port");
type PortedServer = Server & { [PORT]?: number };

/** The port `server` listens on (0 when it is not listening). */
function boundPort(server: Server): number {
  const s = server as PortedServer;
  if (s[PORT] === undefined) {
    const a = server.address();
    if (a === null || typeof a !== "object") return 0;
    s[PORT] = (a as AddressInfo).port;
  }
  return s[PORT];
}

/** The endpoints of a socket `server` accepted, or undefined when it is already gone (reset before we looked). */
export function endpointsOf(socket: Socket, server: Server): Endpoints | undefined {
  const { remoteAddress, remotePort } = socket;
  if (remoteAddress === undefined || remotePort === undefined) return undefined;
  return { peerHost: normalizeHost(remoteAddress), peerPort: remotePort, sockPort: boundPort(server) };
}
