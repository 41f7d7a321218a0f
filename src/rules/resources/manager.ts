// This node's running resources: one instance per stored resource, its liveness (`is_alive`)
// from health checks every `intervalMs` and right after a request fails or succeeds against a
// resource thought down. Going down raises the alarm `resource_down:<id>`; coming back clears it.

import type { StoredResource } from "../engine/records.ts";
import type { ResourceInstance, ResourceTypeDef } from "./types.ts";

export interface AlarmSink {
  activate(name: string, desc: string, details?: Record<string, unknown>): boolean;
  deactivate(name: string): boolean;
}

export interface ManagerLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

interface Running {
  inst: ResourceInstance;
  alive: boolean;
  checking: Promise<boolean> | undefined;
}

export const alarmName = (id: string): string => `resource_down:${id}`;

export class ResourceManager {
  private readonly running = new Map<string, Running>();
  private timer: NodeJS.Timeout | undefined;
  private readonly chains = new Map<string, Promise<void>>();
  alarms: AlarmSink | undefined;

  constructor(
    private readonly types: ReadonlyMap<string, ResourceTypeDef>,
    private readonly logger: ManagerLogger,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer = setInterval(() => {
      for (const id of this.running.keys()) void this.check(id);
    }, this.intervalMs);
    this.timer.unref();
  }

  get(id: string): ResourceInstance | undefined {
    return this.running.get(id)?.inst;
  }

  isAlive(id: string): boolean | undefined {
    return this.running.get(id)?.alive;
  }

  /**
   * Runs the starts and stops of one resource one after another: a start that overlapped another
   * (a create and the store's change of it) would otherwise replace an instance nobody stops.
   */
  private serial<T>(id: string, fn: () => Promise<T>): Promise<T> {
    const next = (this.chains.get(id) ?? Promise.resolve()).then(fn);
    const tail = next.then(
      () => {},
      () => {},
    );
    this.chains.set(id, tail);
    void tail.then(() => {
      if (this.chains.get(id) === tail) this.chains.delete(id);
    });
    return next;
  }

  /** (Re)starts the instance of `r` and checks it once. */
  start1(r: StoredResource): Promise<boolean> {
    return this.serial(r.id, () => this.startNow(r));
  }

  private async startNow(r: StoredResource): Promise<boolean> {
    await this.removeNow(r.id, false);
    const t = this.types.get(r.type);
    if (t === undefined) {
      this.logger.warn({ resource: r.id, type: r.type }, "resource of an unknown type, not started");
      return false;
    }
    let inst: ResourceInstance;
    try {
      inst = t.create(r.id, r.config);
    } catch (err) {
      this.logger.warn({ err, resource: r.id }, "resource cannot start");
      return false;
    }
    this.running.set(r.id, { inst, alive: true, checking: undefined });
    return this.check(r.id);
  }

  /** Stops the instance of `id`; a deleted resource also has its alarm cleared and its instance discarded. */
  remove(id: string, deleted = true): Promise<void> {
    return this.serial(id, () => this.removeNow(id, deleted));
  }

  private async removeNow(id: string, deleted: boolean): Promise<void> {
    const r = this.running.get(id);
    if (r === undefined) return;
    this.running.delete(id);
    if (deleted) this.alarms?.deactivate(alarmName(id));
    await r.inst.stop();
    if (!deleted) return;
    try {
      r.inst.discard?.();
    } catch (err) {
      this.logger.warn({ err, resource: id }, "deleted resource: what it kept could not be removed");
    }
  }

  /** Runs a health check now (one at a time per resource); resolves with the liveness. */
  check(id: string): Promise<boolean> {
    const r = this.running.get(id);
    if (r === undefined) return Promise.resolve(false);
    r.checking ??= r.inst
      .healthCheck()
      .catch(() => false)
      .then((alive) => {
        r.checking = undefined;
        if (this.running.get(id) === r) this.setAlive(id, r, alive);
        return alive;
      });
    return r.checking;
  }

  /** An action's request outcome: a failure re-checks the resource, a success of a dead one too. */
  reportOutcome(id: string, ok: boolean): void {
    const r = this.running.get(id);
    if (r !== undefined && r.alive !== ok) void this.check(id);
  }

  private setAlive(id: string, r: Running, alive: boolean): void {
    const changed = r.alive !== alive;
    r.alive = alive;
    // Raised / cleared on every check (both are no-ops when already so): a restarted instance
    // starts "alive" while its predecessor's alarm may still be up.
    if (alive) {
      if (this.alarms?.deactivate(alarmName(id)) === true || changed)
        this.logger.info({ resource: id }, "resource is up");
    } else {
      this.alarms?.activate(alarmName(id), `resource ${id} is down`, { resource: id });
      if (changed) this.logger.warn({ resource: id }, "resource is down");
    }
  }

  async stop(): Promise<void> {
    if (this.timer !== undefined) clearInterval(this.timer);
    this.timer = undefined;
    for (const id of [...this.running.keys()]) await this.remove(id, false);
  }
}
