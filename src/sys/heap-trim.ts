// Hands memory back to the operating system once a burst is over. During a burst (a connection
// storm, a flood of messages) V8 grows its young generation and keeps the pages it freed in a pool
// for reuse; a node that then goes quiet allocates too little for V8 to collect again, so the
// resident set stays at the burst's peak (about 4 KB per idle connection above what the
// connections hold). When the committed heap has grown by `node.heap_trim_growth`, and by half,
// since the last trim (or the start) and the node has been quiet for one check period, one full
// memory-reducing collection runs: the young generation shrinks back and the pooled pages are
// unmapped. It is a stop-the-world pause (about 0.1 s for 10,000 idle connections), so it waits
// for quiet and runs at most once per MIN_SPACING.

import { getHeapStatistics } from "node:v8";
import type { Logger } from "../telemetry/logger.ts";
import { fullCollection } from "./gc.ts";
import { residentBytes } from "./process-memory.ts";

export interface HeapTrimSettings {
  /** Growth of the committed heap (bytes) since the last trim that calls for one (and by half); 0 = off. */
  growth: number;
}

/** What the trimmer reads of the heap: committed and used bytes. */
export interface HeapReading {
  committed: number;
  used: number;
}

/** Period of the quiet check. */
const CHECK_INTERVAL = 500;
/** Heap allocation per check period (bytes) under which the node counts as quiet (2 MB/s). */
export const QUIET_BYTES = 1024 * 1024;
/** Least time between two trims. */
export const MIN_SPACING = 60_000;

function readHeap(): HeapReading {
  const s = getHeapStatistics();
  return { committed: s.total_heap_size, used: s.used_heap_size };
}

export class HeapTrim {
  private timer: NodeJS.Timeout | undefined;
  /** Committed heap after the last trim (or at start): growth is measured from here. */
  private base = 0;
  /** Used heap at the previous check: what was allocated since is the difference. */
  private lastUsed = 0;
  private lastTrimAt = Number.NEGATIVE_INFINITY;
  /** Trims done so far. */
  count = 0;

  constructor(
    private readonly settings: HeapTrimSettings,
    private readonly logger: Logger,
    private readonly collect: () => void = fullCollection,
    private readonly read: () => HeapReading = readHeap,
  ) {}

  start(): void {
    this.stop();
    if (this.settings.growth <= 0) return;
    const h = this.read();
    this.base = h.committed;
    this.lastUsed = h.used;
    this.timer = setInterval(() => this.check(Date.now()), CHECK_INTERVAL);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** One check: trims when the heap grew enough and the last period was quiet. */
  check(now: number): boolean {
    if (this.settings.growth <= 0) return false;
    const h = this.read();
    // Used heap only falls through a collection, and then the period's allocation is unknown.
    const allocated = h.used >= this.lastUsed ? h.used - this.lastUsed : Number.POSITIVE_INFINITY;
    this.lastUsed = h.used;
    if (h.committed < this.base) this.base = h.committed;
    // Growth by the setting and by half: a heap that grows by live data (not a burst's leftovers)
    // trims at geometric steps, not every `growth` bytes.
    if (h.committed - this.base < Math.max(this.settings.growth, this.base / 2)) return false;
    if (allocated >= QUIET_BYTES || now - this.lastTrimAt < MIN_SPACING) return false;
    this.trim(h, now);
    return true;
  }

  private trim(before: HeapReading, now: number): void {
    const rssBefore = residentBytes();
    const t0 = performance.now();
    this.collect();
    const pauseMs = performance.now() - t0;
    const after = this.read();
    this.base = after.committed;
    this.lastUsed = after.used;
    this.lastTrimAt = now;
    this.count++;
    this.logger.info(
      {
        heap_committed_before: before.committed,
        heap_committed_after: after.committed,
        heap_used_after: after.used,
        rss_before: rssBefore,
        rss_after: residentBytes(),
        pause_ms: Math.round(pauseMs),
      },
      "heap trimmed after growth",
    );
  }
}
