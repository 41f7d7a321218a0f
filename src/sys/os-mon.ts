// OS monitor: the family's CPU and memory alarms for a Node process. Every
// `sysmon.os.cpu_check_interval` the machine's CPU usage over the last interval (from os.cpus()
// times) is compared with the watermarks: at or above `cpu_high_watermark` raises alarm
// `cpu_high_watermark`, below `cpu_low_watermark` clears it (the gap avoids flapping; the low
// watermark is the clear threshold, not an alarm of its own, as in the family). Every
// `sysmon.os.mem_check_interval` the machine's used memory raises/clears
// `high_system_memory_usage`, and this process's resident memory, as a share of its limit (the
// cgroup limit when there is one, else the machine's total), raises/clears
// `high_process_memory_usage`. Watermarks are percents; the settings may change at run time.

import { cpus, freemem, totalmem } from "node:os";
import type { Alarms } from "./alarms.ts";
import { residentBytes } from "./process-memory.ts";

export interface OsMonSettings {
  /** ms; 0 = no CPU check. */
  cpuCheckInterval: number;
  cpuHighWatermark: number;
  cpuLowWatermark: number;
  /** ms; 0 = no memory check. */
  memCheckInterval: number;
  sysmemHighWatermark: number;
  procmemHighWatermark: number;
}

interface CpuSample {
  idle: number;
  total: number;
}

function cpuSample(): CpuSample {
  let idle = 0;
  let total = 0;
  for (const c of cpus()) {
    const t = c.times;
    idle += t.idle;
    total += t.user + t.nice + t.sys + t.idle + t.irq;
  }
  return { idle, total };
}

const round2 = (n: number): number => Math.round(n * 100) / 100;

/** Memory this process may use: the cgroup limit when set (containers), else the machine's. */
export function memoryLimit(): number {
  const total = totalmem();
  const c = process.constrainedMemory();
  return c > 0 && c < total ? c : total;
}

export class OsMon {
  private cpuTimer: NodeJS.Timeout | undefined;
  private memTimer: NodeJS.Timeout | undefined;
  private last: CpuSample = cpuSample();

  constructor(
    private readonly alarms: Alarms,
    readonly settings: OsMonSettings,
  ) {}

  start(): void {
    this.stop();
    this.last = cpuSample();
    if (this.settings.cpuCheckInterval > 0) {
      this.cpuTimer = setInterval(() => this.checkCpu(), this.settings.cpuCheckInterval);
      this.cpuTimer.unref();
    }
    if (this.settings.memCheckInterval > 0) {
      this.memTimer = setInterval(() => this.checkMemory(), this.settings.memCheckInterval);
      this.memTimer.unref();
    }
  }

  stop(): void {
    if (this.cpuTimer !== undefined) clearInterval(this.cpuTimer);
    if (this.memTimer !== undefined) clearInterval(this.memTimer);
    this.cpuTimer = undefined;
    this.memTimer = undefined;
  }

  /** CPU busy percent since the previous call; undefined when no time passed. */
  cpuUsage(): number | undefined {
    const now = cpuSample();
    // os.cpus() answers nothing when /proc/stat cannot be opened (no descriptor free): no sample.
    if (now.total === 0) return undefined;
    const total = now.total - this.last.total;
    const idle = now.idle - this.last.idle;
    this.last = now;
    if (total <= 0) return undefined;
    return round2(100 * (1 - idle / total));
  }

  checkCpu(): void {
    const busy = this.cpuUsage();
    if (busy === undefined) return;
    const { cpuHighWatermark: high, cpuLowWatermark: low } = this.settings;
    if (busy >= high) {
      this.alarms.activate("cpu_high_watermark", `CPU usage ${busy}% is at or above ${high}%`, {
        usage: busy,
        high_watermark: high,
        low_watermark: low,
      });
    } else if (busy < low) this.alarms.deactivate("cpu_high_watermark");
  }

  checkMemory(): void {
    const total = totalmem();
    const sys = round2((100 * (total - freemem())) / total);
    const high = this.settings.sysmemHighWatermark;
    if (sys >= high) {
      this.alarms.activate("high_system_memory_usage", `System memory usage ${sys}% is at or above ${high}%`, {
        usage: sys,
        high_watermark: high,
      });
    } else this.alarms.deactivate("high_system_memory_usage");

    const rss = residentBytes();
    const limit = memoryLimit();
    const proc = round2((100 * rss) / limit);
    const pHigh = this.settings.procmemHighWatermark;
    if (proc >= pHigh) {
      this.alarms.activate("high_process_memory_usage", `Process memory usage ${proc}% is at or above ${pHigh}%`, {
        usage: proc,
        rss,
        limit,
        high_watermark: pHigh,
      });
    } else this.alarms.deactivate("high_process_memory_usage");
  }
}
