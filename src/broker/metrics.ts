// Node metrics: plain counters in one typed array, indexed by a numeric key, so counting on the
// hot path is an array increment with no allocation. Names are the spec's dotted metric keys
// (section 2, "Metric keys"); $SYS and the API read them from here and nowhere else.

export const METRIC_NAMES = [
  "auth.clientid.failure",
  "auth.clientid.ignore",
  "auth.clientid.success",
  "auth.mqtt.anonymous",
  "rules.matched",
  "actions.failure",
  "actions.success",
  "channel.gc",
  "bytes.sent",
  "bytes.received",
  "messages.sent",
  "messages.received",
  "messages.retained",
  "messages.forward",
  "messages.expired",
  "messages.dropped",
  "messages.qos0.received",
  "messages.qos1.received",
  "messages.qos2.received",
  "messages.qos0.sent",
  "messages.qos1.sent",
  "messages.qos2.sent",
  "messages.qos2.dropped",
  "messages.qos2.expired",
  "packets.sent",
  "packets.received",
  "packets.connect.received",
  "packets.connack.sent",
  "packets.connack.auth_error",
  "packets.connack.error",
  "packets.publish.received",
  "packets.publish.sent",
  "packets.publish.error",
  "packets.publish.auth_error",
  "packets.puback.received",
  "packets.puback.sent",
  "packets.puback.missed",
  "packets.pubrec.received",
  "packets.pubrec.sent",
  "packets.pubrec.missed",
  "packets.pubrec.inuse",
  "packets.pubrel.received",
  "packets.pubrel.sent",
  "packets.pubrel.missed",
  "packets.pubcomp.received",
  "packets.pubcomp.sent",
  "packets.pubcomp.missed",
  "packets.pubcomp.inuse",
  "packets.subscribe.received",
  "packets.subscribe.error",
  "packets.subscribe.auth_error",
  "packets.suback.sent",
  "packets.unsubscribe.received",
  "packets.unsubscribe.error",
  "packets.unsuback.sent",
  "packets.pingreq.received",
  "packets.pingresp.sent",
  "packets.disconnect.received",
  "packets.disconnect.sent",
  "packets.auth.received",
  "packets.auth.sent",
  // Beyond the spec's list: the family's finer counters, read by $SYS "later guide" topics.
  "packets.publish.dropped",
  "packets.puback.inuse",
  "messages.publish",
  "messages.delivered",
  "messages.acked",
  "messages.delayed",
  "messages.dropped.expired",
  "messages.dropped.no_subscribers",
  "delivery.dropped",
  "delivery.dropped.no_local",
  "delivery.dropped.too_large",
  "delivery.dropped.qos0_msg",
  "delivery.dropped.queue_full",
  "delivery.dropped.expired",
  "packets.malformed",
  "packets.publish.resent",
  // Persistent sessions whose node died before the client came back (cluster).
  "session.lost",
  // Access control (bumped by the auth features, not the core): the username provider's own
  // counters beside the spec's auth.clientid.*, and the family's ACL decision counters.
  "auth.username.success",
  "auth.username.failure",
  "auth.username.ignore",
  "client.acl.allow",
  "client.acl.deny",
  "client.acl.cache_hit",
] as const;

export type MetricName = (typeof METRIC_NAMES)[number];

const INDEX = new Map<string, number>(METRIC_NAMES.map((n, i) => [n, i]));

/** Numeric index of a metric name; resolve once at module load, then count with `inc(idx)`. */
export function metricIndex(name: MetricName): number {
  return INDEX.get(name) as number;
}

/**
 * Counters that are sums of others, computed when read so the hot path bumps one plain field where
 * several names move together: a PUBLISH sent counts only per QoS on its connection, a PUBLISH
 * received likewise.
 */
const DERIVED: [MetricName, MetricName[], MetricName[]][] = [
  ["messages.sent", ["messages.qos0.sent", "messages.qos1.sent", "messages.qos2.sent"], []],
  ["packets.publish.sent", ["messages.qos0.sent", "messages.qos1.sent", "messages.qos2.sent"], []],
  [
    "messages.delivered",
    ["messages.qos0.sent", "messages.qos1.sent", "messages.qos2.sent"],
    ["packets.publish.resent"],
  ],
  ["messages.received", ["messages.qos0.received", "messages.qos1.received", "messages.qos2.received"], []],
  ["packets.publish.received", ["messages.qos0.received", "messages.qos1.received", "messages.qos2.received"], []],
];
const DERIVED_IDX = DERIVED.map(
  ([t, plus, minus]) => [metricIndex(t), plus.map(metricIndex), minus.map(metricIndex)] as const,
);

/** Something that holds live counts not yet absorbed (the open connections' counters). */
export interface MetricSource {
  addTo(v: Float64Array): void;
}

export class Metrics {
  private readonly values = new Float64Array(METRIC_NAMES.length);
  private readonly live: (() => Iterable<MetricSource>)[] = [];

  /** Registers where live counts come from (the broker's open channels). */
  addLive(sources: () => Iterable<MetricSource>): void {
    this.live.push(sources);
  }

  /** A source leaves the live set: its counts move into the totals. */
  absorb(src: MetricSource): void {
    src.addTo(this.values);
  }

  inc(idx: number): void {
    this.values[idx]++;
  }

  add(idx: number, by: number): void {
    this.values[idx] += by;
  }

  get(name: MetricName): number {
    return this.snapshot()[name];
  }

  /** All counters as `{name: value}`: totals + live sources + derived sums (off the hot path). */
  snapshot(): Record<MetricName, number> {
    const v = Float64Array.from(this.values);
    for (const sources of this.live) for (const s of sources()) s.addTo(v);
    const sum = (idxs: readonly number[]): number => {
      let n = 0;
      for (const i of idxs) n += v[i];
      return n;
    };
    for (const [t, plus, minus] of DERIVED_IDX) v[t] = sum(plus) - sum(minus);
    const out = {} as Record<MetricName, number>;
    for (let i = 0; i < METRIC_NAMES.length; i++) out[METRIC_NAMES[i]] = v[i];
    return out;
  }
}

/** Pre-resolved indexes for the counters the core bumps. */
export const M = {
  bytesSent: metricIndex("bytes.sent"),
  bytesReceived: metricIndex("bytes.received"),
  messagesSent: metricIndex("messages.sent"),
  messagesReceived: metricIndex("messages.received"),
  messagesRetained: metricIndex("messages.retained"),
  messagesForward: metricIndex("messages.forward"),
  messagesExpired: metricIndex("messages.expired"),
  messagesDropped: metricIndex("messages.dropped"),
  messagesDroppedExpired: metricIndex("messages.dropped.expired"),
  messagesDroppedNoSubscribers: metricIndex("messages.dropped.no_subscribers"),
  messagesPublish: metricIndex("messages.publish"),
  messagesDelivered: metricIndex("messages.delivered"),
  messagesAcked: metricIndex("messages.acked"),
  qosReceived: [
    metricIndex("messages.qos0.received"),
    metricIndex("messages.qos1.received"),
    metricIndex("messages.qos2.received"),
  ],
  qosSent: [metricIndex("messages.qos0.sent"), metricIndex("messages.qos1.sent"), metricIndex("messages.qos2.sent")],
  qos2Dropped: metricIndex("messages.qos2.dropped"),
  qos2Expired: metricIndex("messages.qos2.expired"),
  deliveryDropped: metricIndex("delivery.dropped"),
  deliveryDroppedNoLocal: metricIndex("delivery.dropped.no_local"),
  deliveryDroppedTooLarge: metricIndex("delivery.dropped.too_large"),
  deliveryDroppedQos0: metricIndex("delivery.dropped.qos0_msg"),
  deliveryDroppedQueueFull: metricIndex("delivery.dropped.queue_full"),
  deliveryDroppedExpired: metricIndex("delivery.dropped.expired"),
  packetsSent: metricIndex("packets.sent"),
  packetsReceived: metricIndex("packets.received"),
  packetsMalformed: metricIndex("packets.malformed"),
  publishResent: metricIndex("packets.publish.resent"),
  sessionsLost: metricIndex("session.lost"),
  connectReceived: metricIndex("packets.connect.received"),
  connackSent: metricIndex("packets.connack.sent"),
  connackAuthError: metricIndex("packets.connack.auth_error"),
  connackError: metricIndex("packets.connack.error"),
  publishReceived: metricIndex("packets.publish.received"),
  publishSent: metricIndex("packets.publish.sent"),
  publishError: metricIndex("packets.publish.error"),
  publishAuthError: metricIndex("packets.publish.auth_error"),
  publishDropped: metricIndex("packets.publish.dropped"),
  pubackReceived: metricIndex("packets.puback.received"),
  pubackSent: metricIndex("packets.puback.sent"),
  pubackMissed: metricIndex("packets.puback.missed"),
  pubackInuse: metricIndex("packets.puback.inuse"),
  pubrecReceived: metricIndex("packets.pubrec.received"),
  pubrecSent: metricIndex("packets.pubrec.sent"),
  pubrecMissed: metricIndex("packets.pubrec.missed"),
  pubrecInuse: metricIndex("packets.pubrec.inuse"),
  pubrelReceived: metricIndex("packets.pubrel.received"),
  pubrelSent: metricIndex("packets.pubrel.sent"),
  pubrelMissed: metricIndex("packets.pubrel.missed"),
  pubcompReceived: metricIndex("packets.pubcomp.received"),
  pubcompSent: metricIndex("packets.pubcomp.sent"),
  pubcompMissed: metricIndex("packets.pubcomp.missed"),
  pubcompInuse: metricIndex("packets.pubcomp.inuse"),
  subscribeReceived: metricIndex("packets.subscribe.received"),
  subscribeError: metricIndex("packets.subscribe.error"),
  subscribeAuthError: metricIndex("packets.subscribe.auth_error"),
  subackSent: metricIndex("packets.suback.sent"),
  unsubscribeReceived: metricIndex("packets.unsubscribe.received"),
  unsubscribeError: metricIndex("packets.unsubscribe.error"),
  unsubackSent: metricIndex("packets.unsuback.sent"),
  pingreqReceived: metricIndex("packets.pingreq.received"),
  pingrespSent: metricIndex("packets.pingresp.sent"),
  disconnectReceived: metricIndex("packets.disconnect.received"),
  disconnectSent: metricIndex("packets.disconnect.sent"),
  authReceived: metricIndex("packets.auth.received"),
  authSent: metricIndex("packets.auth.sent"),
  authAnonymous: metricIndex("auth.mqtt.anonymous"),
} as const;
