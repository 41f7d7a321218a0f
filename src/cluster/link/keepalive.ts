// Keepalive of the inter-node link, one sweep over every connection: a handshake that takes too
// long, a connection silent past the dead time, a probed connection (its peer redialed) that does
// not answer, are failed; a connection idle past the ping interval is pinged.

import type { Connection } from "./connection.ts";
import { PING } from "./protocol.ts";

export interface KeepaliveTiming {
  pingMs: number;
  deadMs: number;
  handshakeMs: number;
  /** How long a probed connection may stay silent before it is taken for dead. */
  probeMs: number;
}

export function sweepConnections(conns: Iterable<Connection>, now: number, t: KeepaliveTiming): void {
  for (const c of conns) {
    if (c.probeSince !== 0 && c.lastRecv >= c.probeSince) c.probeSince = 0;
    if (!c.open) {
      if (now - c.startedAt > t.handshakeMs) c.fail("unreachable", `handshake with ${c.describe()} timed out`);
    } else if (now - c.lastRecv > t.deadMs) {
      c.fail("unreachable", `nothing from ${c.describe()} for ${now - c.lastRecv} ms`);
    } else if (c.probeSince !== 0 && c.lastRecv < c.probeSince && now - c.probeSince > t.probeMs) {
      c.fail("unreachable", `${c.describe()} redialed and the old connection does not answer`);
    } else if (now - c.lastSent >= t.pingMs) {
      c.send(PING);
    }
  }
}
