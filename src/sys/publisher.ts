// The $SYS publisher (spec section 6; a core feature of the family, not a plugin): every
// `broker.sys_interval` it publishes `$SYS/brokers` (node list), `version`, `sysdescr` (these three
// retained, and once at start), every statistic under `stats/` and every metric under `metrics/`
// (decimal integer text); every `broker.sys_heartbeat` it publishes `uptime` and `datetime`.
// Client presence is in presence.ts. An interval of 0 turns that part off.

import type { Broker } from "../broker/broker.ts";
import { formatDatetime, formatUptime } from "./format.ts";
import { SYSDESCR, VERSION } from "./node-info.ts";
import type { Stats } from "./stats.ts";
import { intText, METRIC_TOPICS, publishSys, STAT_TOPICS, SYS_PREFIX, sysTopic } from "./sys-topics.ts";

export interface SysPublisherSettings {
  /** ms; 0 = never. */
  interval: number;
  /** ms; 0 = never. */
  heartbeat: number;
  /** Running nodes of the cluster (this node alone until clustering replaces it). */
  nodes?: () => string[];
}

export class SysPublisher {
  private ticker: NodeJS.Timeout | undefined;
  private beat: NodeJS.Timeout | undefined;

  constructor(
    private readonly broker: Broker,
    private readonly stats: Stats,
    readonly settings: SysPublisherSettings,
  ) {}

  start(): void {
    this.stop();
    this.publishInfo();
    const { interval, heartbeat } = this.settings;
    if (interval > 0) {
      this.ticker = setInterval(() => this.tick(), interval);
      this.ticker.unref();
    }
    if (heartbeat > 0) {
      this.beat = setInterval(() => this.heartbeat(), heartbeat);
      this.beat.unref();
    }
  }

  stop(): void {
    if (this.ticker !== undefined) clearInterval(this.ticker);
    if (this.beat !== undefined) clearInterval(this.beat);
    this.ticker = undefined;
    this.beat = undefined;
  }

  private topic(suffix: string): string {
    return sysTopic(this.broker.nodeName, suffix);
  }

  /** The retained node description: node list, version, sysdescr. */
  publishInfo(): void {
    const nodes = this.settings.nodes?.() ?? [this.broker.nodeName];
    publishSys(this.broker, SYS_PREFIX, nodes.join(","), true);
    publishSys(this.broker, this.topic("version"), VERSION, true);
    publishSys(this.broker, this.topic("sysdescr"), SYSDESCR, true);
  }

  /** One sys_interval round: node description, statistics, metrics. */
  tick(): void {
    // Both read before anything is published: the round shows one moment, not its own messages.
    const stats = this.stats.snapshot();
    const metrics = this.broker.metrics.snapshot();
    this.publishInfo();
    for (const [t, key] of STAT_TOPICS) publishSys(this.broker, this.topic(`stats/${t}`), intText(stats[key]));
    for (const [t, name] of METRIC_TOPICS) publishSys(this.broker, this.topic(`metrics/${t}`), intText(metrics[name]));
  }

  /** One heartbeat: uptime and local date-time. */
  heartbeat(now = Date.now()): void {
    publishSys(this.broker, this.topic("uptime"), formatUptime(now - this.broker.startedAt));
    publishSys(this.broker, this.topic("datetime"), formatDatetime(now));
  }
}
