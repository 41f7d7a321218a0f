// System monitor for a Node process (the family's sysmon): warnings published as text to
// `$SYS/brokers/<node>/sysmon/<name>` and logged, at most once per subject per `sysmon.window`.
//   long_gc        a garbage-collection pause above `sysmon.long_gc` (GC performance entries)
//   long_schedule  event-loop delay above `sysmon.long_schedule` (perf_hooks histogram, per check)
//   large_heap     V8 heap in use above `sysmon.large_heap`
//   busy_port      a client socket whose unsent bytes stay above `sysmon.busy_port_bytes` for two
//                  checks in a row (when `sysmon.busy_port` is on)
//   busy_dist_port the same for a link to another node: the cluster reports it through
//                  `busyDistPort()` (when `sysmon.busy_dist_port` is on)
// Checks run every CHECK_INTERVAL; a threshold of 0 turns its check off.

import { constants, type ELDHistogram, monitorEventLoopDelay, PerformanceObserver } from "node:perf_hooks";
import type { Broker } from "../broker/broker.ts";
import type { Channel } from "../broker/channel/channel.ts";
import { jsMemory } from "./process-memory.ts";
import { publishSys, sysTopic } from "./sys-topics.ts";

export const CHECK_INTERVAL = 1000;

export type SysmonEvent = "long_gc" | "long_schedule" | "large_heap" | "busy_port" | "busy_dist_port";

export interface SysmonSettings {
  /** ms; 0 = off. */
  longGc: number;
  /** ms; 0 = off. */
  longSchedule: number;
  /** bytes; 0 = off. */
  largeHeap: number;
  busyPort: boolean;
  busyPortBytes: number;
  busyDistPort: boolean;
  /** ms: one warning per event and subject per window. */
  window: number;
}

const GC_KINDS: Record<number, string> = {
  [constants.NODE_PERFORMANCE_GC_MINOR]: "minor",
  [constants.NODE_PERFORMANCE_GC_MAJOR]: "major",
  [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: "incremental",
  [constants.NODE_PERFORMANCE_GC_WEAKCB]: "weakcb",
};

export class Sysmon {
  private timer: NodeJS.Timeout | undefined;
  private gcObserver: PerformanceObserver | undefined;
  private loopDelay: ELDHistogram | undefined;
  private busy = new Set<Channel>();
  private readonly seen = new Set<string>();
  private windowStart = 0;

  constructor(
    private readonly broker: Broker,
    readonly settings: SysmonSettings,
  ) {}

  start(): void {
    this.stop();
    const s = this.settings;
    if (s.longGc > 0) {
      this.gcObserver = new PerformanceObserver((list) => {
        for (const e of list.getEntries()) {
          const kind = (e as { detail?: { kind?: number } | null }).detail?.kind ?? 0;
          this.gcPause(e.duration, GC_KINDS[kind] ?? String(kind));
        }
      });
      this.gcObserver.observe({ entryTypes: ["gc"] });
    }
    if (s.longSchedule > 0) {
      this.loopDelay = monitorEventLoopDelay({ resolution: 10 });
      this.loopDelay.enable();
    }
    this.timer = setInterval(() => this.check(), CHECK_INTERVAL);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    this.gcObserver?.disconnect();
    this.gcObserver = undefined;
    this.loopDelay?.disable();
    this.loopDelay = undefined;
    this.busy.clear();
  }

  /** One garbage-collection pause (from the GC observer). */
  gcPause(ms: number, kind: string): void {
    if (this.settings.longGc > 0 && ms > this.settings.longGc)
      this.report("long_gc", "", `long_gc warning: kind = ${kind}, duration = ${Math.round(ms)}ms`);
  }

  /** A congested link to another node (called by the cluster layer). */
  busyDistPort(node: string, bufferedBytes: number): void {
    if (this.settings.busyDistPort)
      this.report("busy_dist_port", node, `busy_dist_port warning: node = ${node}, buffered = ${bufferedBytes} bytes`);
  }

  /** The periodic checks: event-loop delay, heap, busy sockets. */
  check(): void {
    const s = this.settings;
    const h = this.loopDelay;
    if (h !== undefined) {
      const maxMs = h.max / 1e6;
      h.reset();
      if (maxMs > s.longSchedule)
        this.report("long_schedule", "", `long_schedule warning: delay = ${Math.round(maxMs)}ms`);
    }
    if (s.largeHeap > 0) {
      const used = jsMemory().heapUsed;
      if (used > s.largeHeap)
        this.report(
          "large_heap",
          "",
          `large_heap warning: heap_used = ${used} bytes, threshold = ${s.largeHeap} bytes`,
        );
    }
    if (s.busyPort && s.busyPortBytes > 0) this.checkPorts(s.busyPortBytes);
  }

  private checkPorts(limit: number): void {
    const now = new Set<Channel>();
    for (const ch of this.broker.channels) {
      const n = ch.conn.bufferedBytes();
      if (n <= limit) continue;
      now.add(ch);
      if (!this.busy.has(ch)) continue;
      const peer = `${ch.client.peerHost}:${ch.client.peerPort}`;
      this.report(
        "busy_port",
        peer,
        `busy_port warning: clientid = ${ch.clientId}, peer = ${peer}, buffered = ${n} bytes`,
      );
    }
    this.busy = now;
  }

  /** Publishes and logs one warning unless this event and subject had one in this window. */
  report(event: SysmonEvent, subject: string, text: string, now = Date.now()): void {
    if (now - this.windowStart >= this.settings.window) {
      this.seen.clear();
      this.windowStart = now;
    }
    const key = `${event}\u0000${subject}`;
    if (this.seen.has(key)) return;
    this.seen.add(key);
    this.broker.logger.warn({ sysmon: event, subject }, text);
    publishSys(this.broker, sysTopic(this.broker.nodeName, `sysmon/${event}`), text);
  }
}
