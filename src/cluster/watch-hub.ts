// Watchers of the embedded store: fan-out of changes to the watchers whose prefix matches, each
// with its own queue delivered on a microtask (never inside the write that caused it, so a
// callback may write again), in revision order; plus a bounded history so a watch can start at a
// past revision (range, then watch from its revision + 1) as etcd allows.

import type { WatchEvent, WatchHandle } from "./store.ts";
import { StoreCompactedError } from "./store-errors.ts";

interface Watcher {
  prefix: string;
  onEvent: (ev: WatchEvent) => void;
  queue: WatchEvent[];
  scheduled: boolean;
  closed: boolean;
}

export class WatchHub {
  private readonly watchers = new Set<Watcher>();
  private history: WatchEvent[] = [];
  /** Highest revision whose events are no longer all in `history`. */
  private compactedThrough: number;

  /**
   * @param historySize events kept for watches that start in the past
   * @param startRevision revision at open: earlier history is gone
   * @param reportError where exceptions thrown by callbacks go (they never reach the writer)
   */
  constructor(
    private readonly historySize: number,
    startRevision: number,
    private readonly reportError: (err: unknown) => void,
  ) {
    this.compactedThrough = startRevision;
  }

  get size(): number {
    return this.watchers.size;
  }

  /** Records the events of one write and queues them for the matching watchers. */
  publish(events: readonly WatchEvent[]): void {
    for (const ev of events) {
      this.history.push(ev);
      for (const w of this.watchers) if (ev.key.startsWith(w.prefix)) this.enqueue(w, ev);
    }
    if (this.history.length > this.historySize * 2) {
      const drop = this.history.length - this.historySize;
      // Keep whole revisions: a watch from a revision gets all of its events or none.
      let cut = drop;
      while (cut < this.history.length && this.history[cut].revision === this.history[cut - 1].revision) cut++;
      this.compactedThrough = this.history[cut - 1].revision;
      this.history = this.history.slice(cut);
    }
  }

  /**
   * Adds a watcher; with `fromRevision`, first replays the kept history from there.
   * @throws StoreCompactedError when that history is no longer kept
   */
  add(prefix: string, onEvent: (ev: WatchEvent) => void, fromRevision: number | undefined): WatchHandle {
    if (fromRevision !== undefined && fromRevision <= this.compactedThrough) {
      throw new StoreCompactedError(
        `revision ${fromRevision} is compacted (history starts after ${this.compactedThrough})`,
      );
    }
    const w: Watcher = { prefix, onEvent, queue: [], scheduled: false, closed: false };
    if (fromRevision !== undefined) {
      for (const ev of this.history) if (ev.revision >= fromRevision && ev.key.startsWith(prefix)) this.enqueue(w, ev);
    }
    this.watchers.add(w);
    return {
      close: async () => {
        w.closed = true;
        w.queue.length = 0;
        this.watchers.delete(w);
      },
    };
  }

  closeAll(): void {
    for (const w of this.watchers) {
      w.closed = true;
      w.queue.length = 0;
    }
    this.watchers.clear();
  }

  private enqueue(w: Watcher, ev: WatchEvent): void {
    w.queue.push(ev);
    if (w.scheduled) return;
    w.scheduled = true;
    queueMicrotask(() => this.flush(w));
  }

  private flush(w: Watcher): void {
    w.scheduled = false;
    // Events queued by a callback go to a fresh queue and a later flush, after this batch.
    const batch = w.queue;
    w.queue = [];
    for (const ev of batch) {
      if (w.closed) return;
      try {
        w.onEvent(ev);
      } catch (err) {
        this.reportError(err);
      }
    }
  }
}
