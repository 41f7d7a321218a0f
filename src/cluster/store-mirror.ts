// An in-memory copy of one key prefix of the cluster store, kept current by a watch: the CONNECT
// path reads bans and credentials, and the rule engine its rules and resources, from such copies,
// never from the store. Range, then watch from the
// range's revision (nothing is missed); a watch whose history was compacted reads again. While the
// store cannot be reached at start the mirror stays empty and retries; writes made on this node are
// applied at once (`apply`), so a change is visible here before its watch event arrives.

import type { ClusterStore, WatchEvent, WatchHandle } from "./store.ts";

export interface MirrorLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface MirrorOptions<T> {
  prefix: string;
  /** The map key of a store key under `prefix`, or undefined to skip the key. */
  idOf(key: string): string | undefined;
  /** Decodes a stored value; a throw skips the value (logged). */
  decode(value: Buffer): T;
  /** Called after each change (not for the initial load). */
  onChange?(id: string, now: T | undefined, before: T | undefined): void;
  logger: MirrorLogger;
  /** Delay between attempts while the store cannot be read (ms). */
  retryMs?: number;
}

export class StoreMirror<T> {
  private readonly map = new Map<string, T>();
  private watch: WatchHandle | undefined;
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly store: ClusterStore,
    private readonly o: MirrorOptions<T>,
  ) {}

  get size(): number {
    return this.map.size;
  }

  get(id: string): T | undefined {
    return this.map.get(id);
  }

  values(): IterableIterator<T> {
    return this.map.values();
  }

  entries(): IterableIterator<[string, T]> {
    return this.map.entries();
  }

  /** Loads the prefix and starts watching; a store that cannot be read is retried in background. */
  async start(): Promise<void> {
    this.running = true;
    await this.sync();
  }

  async stop(): Promise<void> {
    this.running = false;
    if (this.timer !== undefined) clearTimeout(this.timer);
    this.timer = undefined;
    const w = this.watch;
    this.watch = undefined;
    await w?.close();
    this.map.clear();
  }

  /** Applies a write made on this node (`undefined` = deleted) before its watch event arrives. */
  apply(id: string, value: T | undefined): void {
    const before = this.map.get(id);
    if (value === undefined) {
      if (!this.map.delete(id)) return;
    } else this.map.set(id, value);
    this.o.onChange?.(id, value, before);
  }

  private async sync(): Promise<void> {
    try {
      const r = await this.store.range(this.o.prefix);
      if (!this.running) return;
      const fresh = new Map<string, T>();
      for (const e of r.entries) {
        const id = this.o.idOf(e.key);
        const v = id === undefined ? undefined : this.decode(e.key, e.value);
        if (id !== undefined && v !== undefined) fresh.set(id, v);
      }
      const reload = this.watch !== undefined;
      await this.watch?.close();
      this.watch = undefined;
      if (reload) {
        // A re-read after a lost watch: report what changed while it was away.
        for (const id of [...this.map.keys()]) if (!fresh.has(id)) this.apply(id, undefined);
        for (const [id, v] of fresh) if (this.map.get(id) !== v) this.apply(id, v);
      } else {
        this.map.clear();
        for (const [id, v] of fresh) this.map.set(id, v);
      }
      this.watch = await this.store.watch(this.o.prefix, (ev) => this.onEvent(ev), {
        fromRevision: r.revision + 1,
        onError: (err) => {
          this.o.logger.warn({ err, prefix: this.o.prefix }, "store watch ended, reading again");
          this.retry(0);
        },
      });
      if (!this.running) await this.stop();
    } catch (err) {
      if (!this.running) return;
      this.o.logger.error({ err, prefix: this.o.prefix }, "cannot read from the cluster store, retrying");
      this.retry(this.o.retryMs ?? 2000);
    }
  }

  private retry(ms: number): void {
    if (!this.running || this.timer !== undefined) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.sync();
    }, ms);
    this.timer.unref();
  }

  private onEvent(ev: WatchEvent): void {
    const id = this.o.idOf(ev.key);
    if (id === undefined) return;
    if (ev.type === "delete") this.apply(id, undefined);
    else {
      const v = this.decode(ev.key, ev.value);
      if (v !== undefined) this.apply(id, v);
    }
  }

  private decode(key: string, value: Buffer): T | undefined {
    try {
      return this.o.decode(value);
    } catch (err) {
      this.o.logger.warn({ err, key }, "unreadable value in the cluster store, skipped");
      return undefined;
    }
  }
}
