// The node's metrics, statistics, listeners and alarms in the Prometheus text exposition format
// (version 0.0.4), served unauthenticated at `GET /metrics` on the management API ports.
// Names are stable: `svc_` + the dotted key with every character outside [a-zA-Z0-9_] turned into
// `_` (`messages.qos1.received` -> `svc_messages_qos1_received`); every sample has a `node` label.
//   - metrics (`/api/v4/metrics` keys): counters, same values
//   - statistics (`/api/v4/stats` keys, `<stat>.count` / `<stat>.max`): gauges, same values
//   - listeners: `svc_listener_current_conns`, `_max_conns`, `_acceptors` and
//     `svc_listener_shutdown_total{reason}` labelled `listener` (protocol) and `listen_on`
//   - `svc_alarms_active`: how many alarms are raised now

import type { ListenerRecord } from "./listeners.ts";

/** `svc_` + the key with dots (and anything else not allowed) as underscores. */
export function promName(key: string): string {
  return `svc_${key.replace(/[^a-zA-Z0-9_]/g, "_")}`;
}

/** A label value escaped per the exposition format (backslash, quote, newline). */
export function promLabel(v: string): string {
  return v.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n");
}

/** `Metric <key> of the node.`, the help of a metric (also the OTLP instrument's description). */
export const metricHelp = (key: string): string => `Metric ${key} of the node.`;
/** `Statistic <key> of the node.` */
export const statHelp = (key: string): string => `Statistic ${key} of the node.`;

/**
 * The figures beside the metrics and statistics, defined once for both expositions: here
 * (`svc_` + key) and the OTLP export (metrics-sdk.ts, `svc.` + key).
 */
export const LISTENER_GAUGES: readonly { key: string; help: string; value: (l: ListenerRecord) => number }[] = [
  { key: "listener.current_conns", help: "Open connections of a listener.", value: (l) => l.current_conns },
  { key: "listener.max_conns", help: "Connection limit of a listener.", value: (l) => l.max_conns },
  { key: "listener.acceptors", help: "Acceptors of a listener.", value: (l) => l.acceptors },
];
export const LISTENER_SHUTDOWNS = { key: "listener.shutdown", help: "Connections a listener closed, by reason." };
export const ALARMS_ACTIVE = { key: "alarms.active", help: "Alarms raised now on the node." };

/** A listener's closed connections by reason (`shutdown_count` is an empty array while none was counted). */
export function shutdownCounts(l: ListenerRecord): Record<string, number> {
  return Array.isArray(l.shutdown_count) ? {} : l.shutdown_count;
}

export interface PrometheusInput {
  node: string;
  metrics: Record<string, number>;
  stats: Record<string, number>;
  listeners: readonly ListenerRecord[];
  alarmsActive: number;
}

export function renderPrometheus(i: PrometheusInput): string {
  const node = `node="${promLabel(i.node)}"`;
  const out: string[] = [];
  const family = (name: string, type: "counter" | "gauge", help: string, samples: [string, number][]): void => {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
    for (const [labels, v] of samples) out.push(`${name}{${labels}} ${Number.isFinite(v) ? v : 0}`);
  };
  for (const k of Object.keys(i.metrics).sort()) family(promName(k), "counter", metricHelp(k), [[node, i.metrics[k]]]);
  for (const k of Object.keys(i.stats).sort()) family(promName(k), "gauge", statHelp(k), [[node, i.stats[k]]]);
  const labels = (l: ListenerRecord): string =>
    `${node},listener="${promLabel(l.protocol)}",listen_on="${promLabel(l.listen_on)}"`;
  for (const g of LISTENER_GAUGES)
    family(
      promName(g.key),
      "gauge",
      g.help,
      i.listeners.map((l) => [labels(l), g.value(l)]),
    );
  const shutdowns: [string, number][] = [];
  for (const l of i.listeners) {
    for (const [reason, n] of Object.entries(shutdownCounts(l)))
      shutdowns.push([`${labels(l)},reason="${promLabel(reason)}"`, n]);
  }
  family(`${promName(LISTENER_SHUTDOWNS.key)}_total`, "counter", LISTENER_SHUTDOWNS.help, shutdowns);
  family(promName(ALARMS_ACTIVE.key), "gauge", ALARMS_ACTIVE.help, [[node, i.alarmsActive]]);
  return `${out.join("\n")}\n`;
}
