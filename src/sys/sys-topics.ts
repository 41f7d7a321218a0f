// The $SYS topic names (spec section 6) and where each value comes from. Every metric is published
// under `metrics/` with its dots written as `/` (this covers every later-guide name and most of
// the first guide's: `messages/qos2/expired`, `packets/puback/missed`...). The first guide also
// used short names for packets that only go one way; they are published as aliases of the
// registry value they stand for. Statistics go under `stats/` the same way (`connections/count`).

import type { Broker } from "../broker/broker.ts";
import { METRIC_NAMES, type MetricName } from "../broker/metrics.ts";
import { makeMessage } from "../broker/types.ts";
import { STAT_NAMES, type StatKey } from "./stats.ts";

export const SYS_PREFIX = "$SYS/brokers";

export function sysTopic(node: string, suffix: string): string {
  return `${SYS_PREFIX}/${node}/${suffix}`;
}

/** First-guide metric topics that are not the registry name with dots as slashes. */
export const FIRST_GUIDE_ALIASES: Readonly<Record<string, MetricName>> = {
  "packets/connect": "packets.connect.received",
  "packets/connack": "packets.connack.sent",
  "packets/subscribe": "packets.subscribe.received",
  "packets/suback": "packets.suback.sent",
  "packets/unsubscribe": "packets.unsubscribe.received",
  "packets/unsuback": "packets.unsuback.sent",
  "packets/pingreq": "packets.pingreq.received",
  "packets/pingresp": "packets.pingresp.sent",
  // AUTH packets the node received (5.0 enhanced authentication).
  "packets/auth": "packets.auth.received",
};

/** `metrics/<topic>` -> metric name, for every metric and every alias (built once). */
export const METRIC_TOPICS: readonly (readonly [string, MetricName])[] = [
  ...METRIC_NAMES.map((n) => [n.replaceAll(".", "/"), n] as const),
  ...Object.entries(FIRST_GUIDE_ALIASES),
];

/** `stats/<topic>` -> statistics key (`connections/count` -> `connections.count`). */
export const STAT_TOPICS: readonly (readonly [string, StatKey])[] = STAT_NAMES.flatMap((n) => [
  [`${n.replaceAll(".", "/")}/count`, `${n}.count` as StatKey] as const,
  [`${n.replaceAll(".", "/")}/max`, `${n}.max` as StatKey] as const,
]);

/** Counters are whole numbers; the text is the decimal integer. */
export function intText(v: number): string {
  return String(Math.trunc(v));
}

/** Publishes a message the node makes (QoS 0, flag `sys`) like any other: hooks, then routing. */
export function publishSys(broker: Broker, topic: string, payload: string, retain = false): void {
  broker.publish(makeMessage({ topic, payload: Buffer.from(payload), qos: 0, retain, sys: true }));
}
