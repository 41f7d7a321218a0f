// Typed hook registry: named hookpoints, callbacks ordered by priority (higher first), `run` for
// notifications and `fold` for chains that compute a value and may stop early. The hookpoint table
// (name -> callback signature) is supplied by the layer that owns the types (broker/hookpoints.ts).
// A crashing callback is logged and skipped; a fold given a `failClosed` value stops with it instead
// (security hooks: authentication and ACL never fail open).

export const STOP: unique symbol = Symbol("hooks.stop");
export interface Stop<A> {
  readonly [STOP]: true;
  readonly value: A;
}
/** Ends a fold with `value`; later callbacks are not called. */
export function stop<A>(value: A): Stop<A> {
  return { [STOP]: true, value };
}
function isStop<A>(r: unknown): r is Stop<A> {
  return typeof r === "object" && r !== null && STOP in r;
}

/** What a fold callback returns: undefined keeps the accumulator, a value replaces it. */
export type FoldResult<A> = A | Stop<A> | undefined | void;
// biome-ignore lint/suspicious/noExplicitAny: callback tables are checked per hookpoint by HookMap
type AnyFn = (...args: any[]) => unknown;

interface Entry {
  fn: AnyFn;
  priority: number;
  owner: string;
  ignoresSystem: boolean;
}

export interface AddOptions {
  /**
   * Message hookpoints: the callback does nothing with a message the node publishes itself
   * (`sys`) that is not retained. Such messages are then only built when someone else would hear
   * of them (Broker.systemAudience).
   */
  ignoresSystem?: boolean;
}

function seesSystem(e: Entry): boolean {
  return !e.ignoresSystem;
}

export interface HookLogger {
  error(obj: object, msg: string): void;
}

export class Hooks<M extends { [K in keyof M]: AnyFn }> {
  private readonly table = new Map<keyof M, Entry[]>();
  // Snapshot arrays, replaced on change, so running hooks never see a list mutate under them.
  private readonly empty: readonly Entry[] = [];
  /**
   * Which hookpoints have callbacks, as properties (set to false, never deleted, so the object keeps
   * a fast shape). Hot call sites read `hooks.active["name"] === true` themselves: a property load
   * with a constant name at each site (has() with its name argument is one shared keyed load).
   */
  readonly active: Partial<Record<keyof M, boolean>> = {};
  /** Hookpoints with a callback that may act on a non-retained system message (AddOptions). */
  private readonly systemSeen: Partial<Record<keyof M, boolean>> = {};

  constructor(private readonly logger: HookLogger) {}

  /** Adds `fn` at `priority` (higher runs first; equal priorities run in insertion order). */
  add<K extends keyof M>(name: K, fn: M[K], priority: number, owner: string, opts: AddOptions = {}): void {
    const list = [...(this.table.get(name) ?? [])];
    let i = list.length;
    while (i > 0 && list[i - 1].priority < priority) i--;
    list.splice(i, 0, { fn, priority, owner, ignoresSystem: opts.ignoresSystem === true });
    this.table.set(name, list);
    this.active[name] = true;
    this.systemSeen[name] = list.some(seesSystem);
  }

  /** Removes every callback that `owner` registered (a plugin unloading). */
  removeOwner(owner: string): void {
    for (const [name, list] of this.table) {
      const kept = list.filter((e) => e.owner !== owner);
      if (kept.length === 0) {
        this.table.delete(name);
        this.active[name] = false;
      } else this.table.set(name, kept);
      this.systemSeen[name] = kept.some(seesSystem);
    }
  }

  has(name: keyof M): boolean {
    return this.active[name] === true;
  }

  /** Whether a callback of `name` may act on a non-retained system message (AddOptions). */
  seesSystem(name: keyof M): boolean {
    return this.systemSeen[name] === true;
  }

  /** Calls every callback; results are ignored, crashes logged. */
  run<K extends keyof M>(name: K, ...args: Parameters<M[K]>): void {
    const list = this.table.get(name);
    if (list === undefined) return;
    for (const e of list) {
      try {
        const r = e.fn(...args);
        if (r instanceof Promise) r.catch((err: unknown) => this.crash(name, e, err));
      } catch (err) {
        this.crash(name, e, err);
      }
    }
  }

  /**
   * Folds `acc` through the callbacks: each gets `(...args, acc)`. Synchronous while every
   * callback is; switches to a promise as soon as one returns a promise.
   */
  fold<K extends keyof M, A>(name: K, args: unknown[], acc: A, failClosed?: A): A | Promise<A> {
    const list = this.table.get(name) ?? this.empty;
    return this.foldFrom(name, list, 0, args, acc, failClosed);
  }

  /**
   * fold() for a hookpoint of one argument, without the argument array and spread calls (the
   * message.publish chain runs for every message). The same semantics: a promise from a callback
   * continues as fold() would.
   */
  fold1<K extends keyof M, A>(name: K, arg: unknown, acc: A, failClosed?: A): A | Promise<A> {
    return this.foldFast(name, 1, arg, undefined, undefined, acc, failClosed);
  }

  /** fold1() for a hookpoint of three arguments (client.check_acl, on every publish). */
  fold3<K extends keyof M, A>(name: K, a: unknown, b: unknown, c: unknown, acc: A, failClosed?: A): A | Promise<A> {
    return this.foldFast(name, 3, a, b, c, acc, failClosed);
  }

  private foldFast<A>(
    name: keyof M,
    n: 1 | 3,
    a: unknown,
    b: unknown,
    c: unknown,
    acc: A,
    failClosed: A | undefined,
  ): A | Promise<A> {
    const list = this.table.get(name) ?? this.empty;
    for (let i = 0; i < list.length; i++) {
      const e = list[i];
      let r: unknown;
      try {
        r = n === 1 ? e.fn(a, acc) : e.fn(a, b, c, acc);
      } catch (err) {
        this.crash(name, e, err);
        if (failClosed !== undefined) return failClosed;
        continue;
      }
      if (r === undefined) continue;
      if (r instanceof Promise) return this.after(r, name, list, i, n === 1 ? [a] : [a, b, c], acc, failClosed);
      if (isStop<A>(r)) return r.value;
      acc = r as A;
    }
    return acc;
  }

  private foldFrom<A>(
    name: keyof M,
    list: readonly Entry[],
    start: number,
    args: unknown[],
    acc: A,
    failClosed: A | undefined,
  ): A | Promise<A> {
    for (let i = start; i < list.length; i++) {
      const e = list[i];
      let r: unknown;
      try {
        r = e.fn(...args, acc);
      } catch (err) {
        this.crash(name, e, err);
        if (failClosed !== undefined) return failClosed;
        continue;
      }
      if (r instanceof Promise) return this.after(r, name, list, i, args, acc, failClosed);
      if (r === undefined) continue;
      if (isStop<A>(r)) return r.value;
      acc = r as A;
    }
    return acc;
  }

  /** The fold from callback `i` on, once its promise `r` settles. */
  private after<A>(
    r: Promise<unknown>,
    name: keyof M,
    list: readonly Entry[],
    i: number,
    args: unknown[],
    acc: A,
    failClosed: A | undefined,
  ): Promise<A> {
    return r.then(
      (v: unknown) => {
        if (isStop<A>(v)) return v.value;
        return this.foldFrom(name, list, i + 1, args, v === undefined ? acc : (v as A), failClosed);
      },
      (err: unknown) => {
        this.crash(name, list[i], err);
        if (failClosed !== undefined) return failClosed;
        return this.foldFrom(name, list, i + 1, args, acc, failClosed);
      },
    );
  }

  private crash(name: keyof M, e: Entry, err: unknown): void {
    this.logger.error({ err, hook: String(name), owner: e.owner }, "hook callback failed");
  }
}
