// Metrics, statistics and alarms of this node for the API (`/metrics`, `/stats`, `/alarms/...`),
// the CLI (`broker metrics|stats`) and later the Prometheus export. Plain objects with the spec's
// key names (section 2): dotted metric keys, `<stat>.count` / `<stat>.max`, alarm records. All
// read the one registry of each kind; nothing here counts. The synchronous methods read this
// node; `of(node, view)` asks one node and `everywhere(view)` every running node that answers
// (handlers `mgmt.metrics`, `mgmt.stats`, `mgmt.alarmsPresent`, `mgmt.alarmsHistory`).

import type { Broker } from "../broker/broker.ts";
import type { AlarmHistoryEntry, AlarmRecord } from "../sys/alarms.ts";
import type { Sys } from "../sys/index.ts";
import type { StatKey } from "../sys/stats.ts";
import { type ClusterCalls, fromEvery } from "./cluster-calls.ts";

/** What each view answers, by view name. */
export interface MetricViews {
  metrics: Record<string, number>;
  stats: Record<StatKey, number>;
  alarmsPresent: AlarmRecord[];
  alarmsHistory: AlarmHistoryEntry[];
}

export type MetricView = keyof MetricViews;

const METHOD: Record<MetricView, string> = {
  metrics: "mgmt.metrics",
  stats: "mgmt.stats",
  alarmsPresent: "mgmt.alarmsPresent",
  alarmsHistory: "mgmt.alarmsHistory",
};

export class MetricsService {
  constructor(
    private readonly broker: Broker,
    private readonly sys: Sys,
    private readonly calls: ClusterCalls,
  ) {
    calls.register(METHOD.metrics, () => this.metrics());
    calls.register(METHOD.stats, () => this.stats());
    calls.register(METHOD.alarmsPresent, () => this.alarmsPresent());
    calls.register(METHOD.alarmsHistory, () => this.alarmsHistory());
  }

  /** One node's view. */
  of<V extends MetricView>(node: string, view: V): Promise<MetricViews[V]> {
    return this.calls.call<MetricViews[V]>(node, METHOD[view], null);
  }

  /** The view of every running node that answers, in node-name order. */
  async everywhere<V extends MetricView>(view: V): Promise<{ node: string; value: MetricViews[V] }[]> {
    return fromEvery<MetricViews[V]>(this.calls, METHOD[view], null);
  }

  get node(): string {
    return this.broker.nodeName;
  }

  /** Every metric key of this node -> integer count. */
  metrics(): Record<string, number> {
    const snap = this.broker.metrics.snapshot();
    const out: Record<string, number> = {};
    for (const [k, v] of Object.entries(snap)) out[k] = Math.trunc(v);
    return out;
  }

  /** Every statistics key of this node (`connections.count`, `connections.max`, ...). */
  stats(): Record<StatKey, number> {
    return this.sys.stats.snapshot();
  }

  /** The node's present alarms (empty when none). */
  alarmsPresent(): AlarmRecord[] {
    return this.sys.alarms.present();
  }

  /** Cleared alarms, oldest first, each with `id`, `desc` and `clear_at`. */
  alarmsHistory(): AlarmHistoryEntry[] {
    return this.sys.alarms.history();
  }
}
