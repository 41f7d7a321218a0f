// PUBACK, PUBREC, PUBREL, PUBCOMP from the client (MQTT 5.0 sections 3.4-3.7, 4.3): they move
// the session's inflight window and the incoming QoS 2 state. Unknown packet ids are counted as
// missed and answered with 0x92 where the protocol has an answer.

import type { IPubackPacket, IPubcompPacket, IPubrecPacket, IPubrelPacket } from "mqtt-packet";
import { encodeAck } from "../../mqtt/fast-codec.ts";
import { RC } from "../../mqtt/reason-codes.ts";
import { M } from "../metrics.ts";
import type { Channel } from "./channel.ts";

export function handleAcks(ch: Channel, p: IPubackPacket | IPubrecPacket | IPubrelPacket | IPubcompPacket): void {
  const session = ch.session;
  if (session === null) return;
  const m = ch.broker.metrics;
  const pid = p.messageId as number;
  switch (p.cmd) {
    case "puback":
      m.inc(M.pubackReceived);
      // In use: the id is in the window, but for a QoS 2 flow.
      if (!session.onPuback(pid)) m.inc(session.inflight.has(pid) ? M.pubackInuse : M.pubackMissed);
      return;
    case "pubrec": {
      m.inc(M.pubrecReceived);
      const r = session.onPubrec(pid, p.reasonCode ?? 0);
      if (r === "missed") {
        m.inc(M.pubrecMissed);
        // [MQTT-4.3.3-?] answer so the client can free its state.
        ch.conn.send({
          cmd: "pubrel",
          messageId: pid,
          reasonCode: ch.protoVer === 5 ? RC.PACKET_IDENTIFIER_NOT_FOUND : undefined,
        });
        m.inc(M.pubrelSent);
      } else if (r === "ok") ch.sendPubrel(pid);
      return;
    }
    case "pubrel": {
      m.inc(M.pubrelReceived);
      const known = session.release(pid);
      if (!known) m.inc(M.pubrelMissed);
      ch.conn.sendBytes(encodeAck(7, pid, known ? 0 : RC.PACKET_IDENTIFIER_NOT_FOUND, ch.protoVer === 5));
      m.inc(M.pubcompSent);
      return;
    }
    case "pubcomp":
      m.inc(M.pubcompReceived);
      // In use: the id is in the window, but its PUBREC has not come yet (or it is QoS 1).
      if (!session.onPubcomp(pid)) m.inc(session.inflight.has(pid) ? M.pubcompInuse : M.pubcompMissed);
      return;
  }
}
