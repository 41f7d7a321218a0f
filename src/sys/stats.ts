// Node statistics (spec section 2, "Statistics keys"): each key has a `.count` (the size of some
// structure now) and a `.max` (the highest count seen since start). Counts are not kept twice:
// a source function reads the core's own structures (router, session registry, retainer) on
// demand — on every refresh (the 1 s sweep, and before every read) — and the max follows. Later
// features (rule engine: rules, actions, resources) register their own source or set a count.

import type { Broker } from "../broker/broker.ts";
import type { Retainer } from "../retainer/retainer.ts";

export const STAT_NAMES = [
  "connections",
  "channels",
  "sessions",
  // The first guide's `sessions/persistent/*` topics: sessions that outlive their connection.
  "sessions.persistent",
  "subscriptions",
  "subscriptions.shared",
  "suboptions",
  "subscribers",
  "topics",
  "routes",
  "retained",
  "rules",
  "actions",
  "resources",
] as const;

export type StatName = (typeof STAT_NAMES)[number];
export type StatKey = `${StatName}.count` | `${StatName}.max`;

const INDEX = new Map<string, number>(STAT_NAMES.map((n, i) => [n, i]));

export class Stats {
  private readonly counts = new Float64Array(STAT_NAMES.length);
  private readonly maxes = new Float64Array(STAT_NAMES.length);
  private readonly sources: ((() => number) | undefined)[] = new Array(STAT_NAMES.length).fill(undefined);
  private timer: NodeJS.Timeout | undefined;

  /** Reads `name` from `fn` on every refresh (replaces an earlier source). */
  setSource(name: StatName, fn: () => number): void {
    this.sources[INDEX.get(name) as number] = fn;
  }

  removeSource(name: StatName): void {
    this.sources[INDEX.get(name) as number] = undefined;
  }

  /** Sets a count pushed by its owner (for keys without a source); the max follows. */
  set(name: StatName, count: number): void {
    this.store(INDEX.get(name) as number, count);
  }

  /** Reads every source now. */
  refresh(): void {
    for (let i = 0; i < STAT_NAMES.length; i++) {
      const fn = this.sources[i];
      if (fn !== undefined) this.store(i, fn());
    }
  }

  /** Reads the sources of some keys only (cheap ones, on events such as a client connecting). */
  refreshOnly(names: readonly StatName[]): void {
    for (const n of names) {
      const i = INDEX.get(n) as number;
      const fn = this.sources[i];
      if (fn !== undefined) this.store(i, fn());
    }
  }

  private store(i: number, count: number): void {
    this.counts[i] = count;
    if (count > this.maxes[i]) this.maxes[i] = count;
  }

  /** Current count and max of one key (refreshed first). */
  get(name: StatName): { count: number; max: number } {
    const i = INDEX.get(name) as number;
    const fn = this.sources[i];
    if (fn !== undefined) this.store(i, fn());
    return { count: this.counts[i], max: this.maxes[i] };
  }

  /** Every key as `{"connections.count": n, "connections.max": m, ...}` (refreshed first). */
  snapshot(): Record<StatKey, number> {
    this.refresh();
    const out = {} as Record<StatKey, number>;
    for (let i = 0; i < STAT_NAMES.length; i++) {
      out[`${STAT_NAMES[i]}.count`] = this.counts[i];
      out[`${STAT_NAMES[i]}.max`] = this.maxes[i];
    }
    return out;
  }

  /** Refreshes every `intervalMs` so the max also sees peaks between reads. */
  start(intervalMs: number): void {
    this.stop();
    this.refresh();
    this.timer = setInterval(() => this.refresh(), intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
  }
}

/** Keys cheap enough to read on every connect (sizes of maps and kept counts, no iteration). */
export const CHEAP_STATS: readonly StatName[] = ["connections", "channels", "sessions", "sessions.persistent"];

/** Wires the core's structures as sources: nothing here keeps a count of its own. */
export function addCoreSources(stats: Stats, broker: Broker, retainer: Retainer | undefined): void {
  const router = broker.router;
  const sessions = broker.sessions;
  stats.setSource("connections", () => sessions.connectedCount);
  stats.setSource("channels", () => broker.channels.size);
  stats.setSource("sessions", () => sessions.size);
  stats.setSource("sessions.persistent", () => sessions.counts.persistent);
  // One subscription = one (session, filter) pair; its options are stored once with it.
  stats.setSource("subscriptions", () => router.subscriptionCount);
  stats.setSource("suboptions", () => router.subscriptionCount);
  stats.setSource("subscriptions.shared", () => router.sharedCount);
  stats.setSource("subscribers", () => sessions.counts.subscribers);
  stats.setSource("routes", () => router.routeCount);
  // Topics are the routing table's filters: `topics/*` equal `routes/*` (spec section 6).
  stats.setSource("topics", () => router.routeCount);
  if (retainer !== undefined) stats.setSource("retained", () => retainer.count);
}
