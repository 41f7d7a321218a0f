// Between the local router and route sync: a route whose last local subscriber is a session moving
// to another node stays registered (pinned) until the new owner confirms the move, so publishers
// keep sending its messages here, where they are passed on (session-handover.ts), instead of to
// no node at all while the new owner's route is not known yet.

import type { RouteListener } from "../broker/router/router.ts";

export class RoutePins implements RouteListener {
  /** Filters with a plain local subscriber now. */
  private readonly local = new Set<string>();
  private readonly pins = new Map<string, number>();

  constructor(private readonly sync: RouteListener) {}

  routeAdded(filter: string): void {
    this.local.add(filter);
    if (!this.pins.has(filter)) this.sync.routeAdded(filter);
  }

  routeRemoved(filter: string): void {
    this.local.delete(filter);
    if (!this.pins.has(filter)) this.sync.routeRemoved(filter);
  }

  sharedAdded(filter: string, group: string): void {
    this.sync.sharedAdded?.(filter, group);
  }

  sharedRemoved(filter: string, group: string): void {
    this.sync.sharedRemoved?.(filter, group);
  }

  /** Keeps the routes of `filters` registered even without a local subscriber. */
  pin(filters: readonly string[]): void {
    for (const f of filters) this.pins.set(f, (this.pins.get(f) ?? 0) + 1);
  }

  /** Releases a pin: a route with no local subscriber left is removed now. */
  unpin(filters: readonly string[]): void {
    for (const f of filters) {
      const n = (this.pins.get(f) ?? 0) - 1;
      if (n > 0) {
        this.pins.set(f, n);
        continue;
      }
      this.pins.delete(f);
      if (!this.local.has(f)) this.sync.routeRemoved(f);
    }
  }
}
