// The node's self-observation, assembled: statistics, the $SYS publisher and client presence, the
// $SYS subscription guard, alarms with the OS monitor, sysmon, the heap trim and message tracing.
// A core feature (not in the spec's plugin list), started by main.ts after the broker and stopped
// after it.

import type { Broker } from "../broker/broker.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import type { Retainer } from "../retainer/retainer.ts";
import { Alarms } from "./alarms.ts";
import { HeapTrim, type HeapTrimSettings } from "./heap-trim.ts";
import { OsMon, type OsMonSettings } from "./os-mon.ts";
import { addPresenceHooks, PRESENCE_OWNER } from "./presence.ts";
import { SysPublisher, type SysPublisherSettings } from "./publisher.ts";
import { addCoreSources, CHEAP_STATS, Stats } from "./stats.ts";
import { addSysGuard, removeSysGuard } from "./sys-guard.ts";
import { Sysmon, type SysmonSettings } from "./sysmon.ts";
import { Tracer } from "./tracer.ts";

/** Period of the statistics sweep that keeps each `.max` close to the true peak. */
export const STATS_INTERVAL = 1000;
const STATS_OWNER = "svc_stats";

export interface SysSettings {
  publisher: SysPublisherSettings;
  sysmon: SysmonSettings;
  osmon: OsMonSettings;
  heapTrim: HeapTrimSettings;
}

export interface Sys {
  readonly stats: Stats;
  readonly alarms: Alarms;
  readonly publisher: SysPublisher;
  readonly sysmon: Sysmon;
  readonly osmon: OsMon;
  readonly heapTrim: HeapTrim;
  readonly tracer: Tracer;
  stop(): Promise<void>;
}

export function startSys(broker: Broker, retainer: Retainer | undefined, settings: SysSettings): Sys {
  const stats = new Stats();
  addCoreSources(stats, broker, retainer);
  stats.start(STATS_INTERVAL);
  // Connection counts move fastest: read them (map sizes only) on every connect as well.
  broker.hooks.add("client.connected", () => stats.refreshOnly(CHEAP_STATS), PRIORITY.metrics, STATS_OWNER);

  addSysGuard(broker);
  addPresenceHooks(broker);
  const publisher = new SysPublisher(broker, stats, settings.publisher);
  publisher.start();

  const alarms = new Alarms(broker);
  const osmon = new OsMon(alarms, settings.osmon);
  osmon.start();
  const sysmon = new Sysmon(broker, settings.sysmon);
  sysmon.start();
  const heapTrim = new HeapTrim(settings.heapTrim, broker.logger);
  heapTrim.start();
  const tracer = new Tracer(broker);

  return {
    stats,
    alarms,
    publisher,
    sysmon,
    osmon,
    heapTrim,
    tracer,
    async stop() {
      publisher.stop();
      osmon.stop();
      sysmon.stop();
      heapTrim.stop();
      stats.stop();
      broker.hooks.removeOwner(STATS_OWNER);
      broker.hooks.removeOwner(PRESENCE_OWNER);
      removeSysGuard(broker);
      await tracer.stopAll();
    },
  };
}
