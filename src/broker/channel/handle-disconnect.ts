// DISCONNECT from the client (MQTT 5.0 section 3.14): 0x00 discards the will [MQTT-3.14.4-3],
// 0x04 keeps it; 5.0 may update the session expiry, but not from 0 to non-zero [MQTT-3.14.2-2].

import type { IDisconnectPacket } from "mqtt-packet";
import { RC } from "../../mqtt/reason-codes.ts";
import { M } from "../metrics.ts";
import type { Channel } from "./channel.ts";
import { protocolError } from "./reply.ts";

export function handleDisconnect(ch: Channel, p: IDisconnectPacket): void {
  ch.broker.metrics.inc(M.disconnectReceived);
  const rc = p.reasonCode ?? 0;
  const session = ch.session;
  const expiry = p.properties?.sessionExpiryInterval;
  if (expiry !== undefined && session !== null) {
    if (session.expiryInterval === 0 && expiry > 0) return protocolError(ch, "session expiry raised from 0");
    session.expiryInterval = expiry;
  }
  ch.disconnectRc = rc;
  if (rc !== RC.DISCONNECT_WITH_WILL) ch.will = null;
  ch.close(rc === 0 ? "normal" : ch.describeReason(rc), true);
}
