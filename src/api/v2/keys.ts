// The v2 API's slash-separated metric and statistics keys (spec 001 §2) and the dotted keys of
// the node's registries they read.

/** v2 metric key -> dotted metric key. */
export const V2_METRICS: Readonly<Record<string, string>> = {
  "bytes/received": "bytes.received",
  "bytes/sent": "bytes.sent",
  "packets/sent": "packets.sent",
  "packets/received": "packets.received",
  "packets/connect": "packets.connect.received",
  "packets/connack": "packets.connack.sent",
  "packets/subscribe": "packets.subscribe.received",
  "packets/suback": "packets.suback.sent",
  "packets/unsubscribe": "packets.unsubscribe.received",
  "packets/unsuback": "packets.unsuback.sent",
  "packets/pingreq": "packets.pingreq.received",
  "packets/pingresp": "packets.pingresp.sent",
  "packets/disconnect": "packets.disconnect.received",
  "packets/publish/received": "packets.publish.received",
  "packets/publish/sent": "packets.publish.sent",
  "packets/puback/received": "packets.puback.received",
  "packets/puback/sent": "packets.puback.sent",
  "packets/puback/missed": "packets.puback.missed",
  "packets/pubrec/received": "packets.pubrec.received",
  "packets/pubrec/sent": "packets.pubrec.sent",
  "packets/pubrec/missed": "packets.pubrec.missed",
  "packets/pubrel/received": "packets.pubrel.received",
  "packets/pubrel/sent": "packets.pubrel.sent",
  "packets/pubrel/missed": "packets.pubrel.missed",
  "packets/pubcomp/received": "packets.pubcomp.received",
  "packets/pubcomp/sent": "packets.pubcomp.sent",
  "packets/pubcomp/missed": "packets.pubcomp.missed",
  "messages/received": "messages.received",
  "messages/sent": "messages.sent",
  "messages/dropped": "messages.dropped",
  "messages/retained": "messages.retained",
  "messages/forward": "messages.forward",
  "messages/qos0/received": "messages.qos0.received",
  "messages/qos0/sent": "messages.qos0.sent",
  "messages/qos1/received": "messages.qos1.received",
  "messages/qos1/sent": "messages.qos1.sent",
  "messages/qos2/received": "messages.qos2.received",
  "messages/qos2/sent": "messages.qos2.sent",
  "messages/qos2/dropped": "messages.qos2.dropped",
};

/** v2 statistics name -> the registry's statistics name (`clients` are connections). */
export const V2_STATS: Readonly<Record<string, string>> = {
  clients: "connections",
  retained: "retained",
  routes: "routes",
  sessions: "sessions",
  subscribers: "subscribers",
  subscriptions: "subscriptions",
  topics: "topics",
};

export function v2Metrics(dotted: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, from] of Object.entries(V2_METRICS)) out[k] = dotted[from] ?? 0;
  return out;
}

export function v2Stats(dotted: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, from] of Object.entries(V2_STATS)) {
    out[`${k}/count`] = dotted[`${from}.count`] ?? 0;
    out[`${k}/max`] = dotted[`${from}.max`] ?? 0;
  }
  return out;
}
