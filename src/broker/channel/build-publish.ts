// Outgoing PUBLISH bytes for one delivery (MQTT 5.0 section 3.3): retain flag per Retain As
// Published, remaining message expiry, subscription identifier, outbound topic alias, and the
// client's Maximum Packet Size [MQTT-3.1.2-24]. A QoS 0 delivery without per-subscriber
// properties is serialized once per message and protocol shape, and the bytes are shared.

import mqttPacket, { type IPublishPacket } from "mqtt-packet";
import type { Delivery } from "../session/delivery.ts";
import type { Message } from "../types.ts";
import type { Channel } from "./channel.ts";

/** Cached QoS 0 bytes on the message: [v3/v4 no-retain, v3/v4 retain, v5 no-retain, v5 retain]. */
const CACHE = Symbol("publish-bytes");
type Cached = Message & { [CACHE]?: (Buffer | undefined)[] };

export function buildPublish(ch: Channel, d: Delivery, pid: number, dup: boolean): Buffer | null {
  const msg = d.msg;
  const retain = d.retained || (d.opts.rap && msg.retain);
  const v5 = ch.protoVer === 5;
  const shareable = d.qos === 0 && (!v5 || (d.opts.subId === 0 && msg.expiresAt === 0 && ch.outAliases === null));
  if (shareable) {
    const slot = (v5 ? 2 : 0) + (retain ? 1 : 0);
    const cached = (msg as Cached)[CACHE]?.[slot];
    if (cached !== undefined) return fits(ch, cached);
    const bytes = serialize(ch, msg, d, 0, false, retain);
    const c = ((msg as Cached)[CACHE] ??= []);
    c[slot] = bytes;
    return fits(ch, bytes);
  }
  newAlias = null;
  const bytes = fits(ch, serialize(ch, msg, d, pid, dup, retain));
  // A mapping the client never received must not be relied on later [MQTT-3.3.2-12].
  if (bytes === null && newAlias !== null) ch.outAliases?.forget(newAlias);
  return bytes;
}

/** Topic whose outbound alias the last serialize() assigned, null if none. */
let newAlias: string | null = null;

function fits(ch: Channel, bytes: Buffer): Buffer | null {
  return ch.clientMaxPacket > 0 && bytes.length > ch.clientMaxPacket ? null : bytes;
}

function serialize(ch: Channel, msg: Message, d: Delivery, pid: number, dup: boolean, retain: boolean): Buffer {
  const packet: IPublishPacket = {
    cmd: "publish",
    topic: msg.topic,
    payload: msg.payload,
    qos: d.qos,
    dup,
    retain,
    messageId: d.qos > 0 ? pid : undefined,
  };
  if (ch.protoVer === 5) {
    const props: NonNullable<IPublishPacket["properties"]> = msg.properties === undefined ? {} : { ...msg.properties };
    if (msg.expiresAt !== 0) {
      // [MQTT-3.3.2-6] the interval sent is what remains.
      props.messageExpiryInterval = Math.max(1, Math.ceil((msg.expiresAt - Date.now()) / 1000));
    }
    if (d.opts.subId > 0) props.subscriptionIdentifier = d.opts.subId;
    if (ch.outAliases !== null) {
      const a = ch.outAliases.lookup(msg.topic);
      if (a !== null) {
        props.topicAlias = a.alias;
        if (a.known) packet.topic = "";
        else newAlias = msg.topic;
      }
    }
    for (const _ in props) {
      packet.properties = props;
      break;
    }
  }
  return mqttPacket.generate(packet, { protocolVersion: ch.protoVer });
}
