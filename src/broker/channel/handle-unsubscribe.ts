// UNSUBSCRIBE (MQTT 5.0 section 3.10): removes each filter; 5.0 UNSUBACK carries 0x00 or 0x11
// (no subscription existed) per filter [MQTT-3.11.3-1]; 3.x UNSUBACK has no payload.

import type { IUnsubscribePacket } from "mqtt-packet";
import { RC } from "../../mqtt/reason-codes.ts";
import { encodeUnsuback } from "../../mqtt/subscribe-codec.ts";
import { validateTopicFilter } from "../../mqtt/topic.ts";
import { M } from "../metrics.ts";
import type { Channel } from "./channel.ts";
import { protocolError } from "./reply.ts";

export function handleUnsubscribe(ch: Channel, p: IUnsubscribePacket): void {
  const m = ch.broker.metrics;
  m.inc(M.unsubscribeReceived);
  // [MQTT-2.3.1-1] a non-zero packet id; [MQTT-3.10.3-2] at least one topic filter.
  if (!p.messageId) return protocolError(ch, "UNSUBSCRIBE with packet id 0");
  if (p.unsubscriptions.length === 0) return protocolError(ch, "UNSUBSCRIBE without topic filters");
  const session = ch.session;
  if (session === null) return;
  const filters = ch.broker.hooks.fold(
    "client.unsubscribe",
    [ch.client, p.unsubscriptions],
    p.unsubscriptions,
  ) as string[];
  const codes: number[] = [];
  for (const f of filters) {
    if (!validateTopicFilter(f, ch.zone.maxTopicLevels)) {
      m.inc(M.unsubscribeError);
      codes.push(RC.TOPIC_FILTER_INVALID);
      continue;
    }
    codes.push(ch.broker.unsubscribe(session, f) ? RC.SUCCESS : RC.NO_SUBSCRIPTION_EXISTED);
  }
  ch.conn.sendBytes(encodeUnsuback(p.messageId, codes, ch.protoVer === 5));
  m.inc(M.unsubackSent);
}
