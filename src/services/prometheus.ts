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
  for (const k of Object.keys(i.metrics).sort())
    family(promName(k), "counter", `Metric ${k} of the node.`, [[node, i.metrics[k]]]);
  for (const k of Object.keys(i.stats).sort())
    family(promName(k), "gauge", `Statistic ${k} of the node.`, [[node, i.stats[k]]]);
  const per = (f: (l: ListenerRecord) => number): [string, number][] =>
    i.listeners.map((l) => [`${node},listener="${promLabel(l.protocol)}",listen_on="${promLabel(l.listen_on)}"`, f(l)]);
  family(
    "svc_listener_current_conns",
    "gauge",
    "Open connections of a listener.",
    per((l) => l.current_conns),
  );
  family(
    "svc_listener_max_conns",
    "gauge",
    "Connection limit of a listener.",
    per((l) => l.max_conns),
  );
  family(
    "svc_listener_acceptors",
    "gauge",
    "Acceptors of a listener.",
    per((l) => l.acceptors),
  );
  const shutdowns: [string, number][] = [];
  for (const l of i.listeners) {
    const counts = Array.isArray(l.shutdown_count) ? {} : l.shutdown_count;
    for (const [reason, n] of Object.entries(counts))
      shutdowns.push([
        `${node},listener="${promLabel(l.protocol)}",listen_on="${promLabel(l.listen_on)}",reason="${promLabel(reason)}"`,
        n,
      ]);
  }
  family("svc_listener_shutdown_total", "counter", "Connections a listener closed, by reason.", shutdowns);
  family("svc_alarms_active", "gauge", "Alarms raised now on the node.", [[node, i.alarmsActive]]);
  return `${out.join("\n")}\n`;
}
