// Maps protocol outcomes to what goes back on the wire, in one place: refusals at CONNECT
// (CONNACK with a 5.0 reason code or the 3.1.1 return code), protocol errors after it
// (DISCONNECT with a reason code for 5.0, a plain close for 3.x).

import { connackCodeV3, RC, reasonName } from "../../mqtt/reason-codes.ts";
import { M } from "../metrics.ts";
import type { Channel } from "./channel.ts";

/** Refuses a CONNECT with `rc` (5.0 code; mapped for 3.x) and closes [MQTT-3.2.2-6]. */
export function refuseConnect(ch: Channel, rc: number, reasonString?: string): void {
  const m = ch.broker.metrics;
  if (ch.protoVer === 5) {
    ch.conn.send({
      cmd: "connack",
      reasonCode: rc,
      sessionPresent: false,
      properties: reasonString !== undefined && ch.requestProblemInfo ? { reasonString } : undefined,
    });
  } else {
    ch.conn.send({ cmd: "connack", returnCode: connackCodeV3(rc), sessionPresent: false });
  }
  m.inc(M.connackSent);
  if (rc === RC.BAD_USER_NAME_OR_PASSWORD || rc === RC.NOT_AUTHORIZED || rc === RC.BANNED) m.inc(M.connackAuthError);
  else m.inc(M.connackError);
  ch.broker.hooks.run("client.connack", ch.client, rc);
  ch.close(reasonName(rc));
}

/** A protocol violation after CONNECT: DISCONNECT 0x82 (5.0) and close. */
export function protocolError(ch: Channel, detail: string): void {
  ch.broker.logger.debug({ clientid: ch.client.clientId, detail }, "protocol error");
  ch.broker.metrics.inc(M.packetsMalformed);
  if (ch.state === "idle" || ch.state === "authenticating") {
    ch.close("protocol_error");
    return;
  }
  ch.kick(RC.PROTOCOL_ERROR, "protocol_error");
}

/** Server-side DISCONNECT with a specific reason (5.0) or a plain close (3.x). */
export function disconnectWith(ch: Channel, rc: number, detail: string): void {
  ch.broker.logger.debug({ clientid: ch.client.clientId, detail, rc }, "disconnecting client");
  ch.kick(rc, reasonName(rc));
}
