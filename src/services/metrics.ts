// Metrics, statistics and alarms of this node for the API (`/metrics`, `/stats`, `/alarms/...`),
// the CLI (`broker metrics|stats`) and later the Prometheus export. Plain objects with the spec's
// key names (section 2): dotted metric keys, `<stat>.count` / `<stat>.max`, alarm records. All
// read the one registry of each kind; nothing here counts.

import type { Broker } from "../broker/broker.ts";
import type { AlarmHistoryEntry, AlarmRecord } from "../sys/alarms.ts";
import type { Sys } from "../sys/index.ts";
import type { StatKey } from "../sys/stats.ts";

export class MetricsService {
  constructor(
    private readonly broker: Broker,
    private readonly sys: Sys,
  ) {}

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
