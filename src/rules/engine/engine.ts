// The rule engine runtime (plugin `svc_rule_engine`): rules and resources live in the cluster
// store (`rules/<id>`, `resources/<id>`) and are mirrored by a watch, so every node runs every
// rule and they survive restarts. A rule is compiled once when it is loaded or changes
// (loaded-rule.ts: its running form), and the enabled ones are indexed (rule-index.ts). The hooks only look rules up and enqueue the event;
// the worker (queue.ts) builds the event's columns, evaluates, and starts the actions, which run
// asynchronously (at most `inflightLimit` rows at once). Hooks are added only for the events
// some rule is on, and only while the plugin is loaded. A queue over its high watermark holds the
// acknowledgements of the QoS 1/2 publishes that fill it (backpressure.ts); a full one is run in
// part by the hook that finds it full (QoS 0 floods have no acknowledgement to hold), so no event
// is lost to a busy broker. Too many rows in flight fail the rule's actions (counted). Publish rules skip `$SYS` messages and messages that the
// same rule republished (the chain of rule ids in `headers.rules_republished_by`).

import type { Broker } from "../../broker/broker.ts";
import { metricIndex } from "../../broker/metrics.ts";
import { isSysMessage, type Message, makeMessage, type NewMessage } from "../../broker/types.ts";
import type { ClusterKeys } from "../../cluster/keys.ts";
import { decodeSegment } from "../../cluster/keys.ts";
import type { ClusterStore } from "../../cluster/store.ts";
import { StoreMirror } from "../../cluster/store-mirror.ts";
import type { Logger } from "../../telemetry/logger.ts";
import type { Span, Tracing } from "../../telemetry/tracing.ts";
import { BUILTIN_ACTIONS } from "../actions/index.ts";
import type { ActionDef, ActionEnv } from "../actions/types.ts";
import type { EventKey } from "../event-names.ts";
import { type AlarmSink, ResourceManager } from "../resources/manager.ts";
import type { ResourceTypeDef } from "../resources/types.ts";
import { webHookType } from "../resources/web-hook.ts";
import { Frame } from "../runtime/scope.ts";
import type { Row } from "../runtime/values.ts";
import { QueuePressure } from "./backpressure.ts";
import * as C from "./context.ts";
import { addEventHook } from "./event-hooks.ts";
import { type LoadedAction, type LoadedRule, loadRule } from "./loaded-rule.ts";
import { WorkQueue } from "./queue.ts";
import type { StoredResource, StoredRule } from "./records.ts";
import { RuleIndex } from "./rule-index.ts";
import { RuleTracing } from "./rule-tracing.ts";

export const ENGINE_PLUGIN = "svc_rule_engine";
/** Message header: ids of the rules that republished this message (loop guard). */
export const GUARD_HEADER = "rules_republished_by";

const RULES_MATCHED = metricIndex("rules.matched");
const ACTIONS_SUCCESS = metricIndex("actions.success");
const ACTIONS_FAILURE = metricIndex("actions.failure");

/** What an event's columns come from: a message.publish event's message, or the builder of another event's. */
type EventSource = Message | (() => Row);

/** Topics whose publish rules are cached per index (the cache is cleared when it grows past this). */
const TOPIC_CACHE_LIMIT = 4096;

export interface StatSink {
  set(name: "rules" | "actions" | "resources", count: number): void;
}

export interface RuleEngineOptions {
  broker: Broker;
  store: ClusterStore;
  keys: ClusterKeys;
  logger: Logger;
  /**
   * Events waiting for evaluation (default 10000; QoS 1/2 publishers are held from half of it, and
   * a hook that finds it full runs its oldest quarter).
   */
  queueLimit?: number;
  /** Rows whose actions run at once (default 10000). */
  inflightLimit?: number;
  /** Period of resource health checks (default 10 s). */
  healthCheckMs?: number;
  /** The node's tracing facade (`telemetry.tracing = on`): rule and action spans of traced messages. */
  tracing?: Tracing | null;
}

export class RuleEngine {
  readonly name = ENGINE_PLUGIN;
  readonly version = "4.4.0";
  readonly description = "SVC Rule Engine";
  readonly type = "feature" as const;

  readonly actions = new Map<string, ActionDef>();
  readonly resourceTypes = new Map<string, ResourceTypeDef>();
  readonly ruleStore: StoreMirror<StoredRule>;
  readonly resourceStore: StoreMirror<StoredResource>;
  readonly resources: ResourceManager;
  private readonly loaded = new Map<string, LoadedRule>();
  private index = new RuleIndex<LoadedRule>([]);
  private readonly queue: WorkQueue<readonly LoadedRule[], EventSource>;
  private readonly pressure: QueuePressure;
  private readonly queueLimit: number;
  /** While enqueue() runs queued events itself (a full queue). */
  private runningNow = false;
  private readonly inflightLimit: number;
  private inflight = 0;
  private active = false;
  private started = false;
  private readonly hooked = new Set<EventKey>();
  private stats: StatSink | undefined;
  private speedTimer: NodeJS.Timeout | undefined;
  /** While an action runs: the loop-guard chain of its event and its rule (see republish). */
  private chain: readonly string[] | undefined;
  private chainRule: string | undefined;
  private readonly scratch: LoadedRule[] = [];
  /** message.publish rules by topic for the current index (read-only arrays). */
  private topicRules = new Map<string, readonly LoadedRule[]>();
  private readonly env: ActionEnv;
  private readonly metrics: Broker["metrics"];
  private readonly tracer: RuleTracing | null;
  /** While an action of a traced message runs (synchronously): its span. */
  private actionSpan: Span | undefined;

  constructor(private readonly o: RuleEngineOptions) {
    for (const a of BUILTIN_ACTIONS) this.actions.set(a.name, a);
    this.resourceTypes.set(webHookType.name, webHookType);
    const limit = o.queueLimit ?? 10000;
    this.queueLimit = limit;
    this.pressure = new QueuePressure(Math.max(1, limit >> 1), limit >> 2);
    this.queue = new WorkQueue(limit, (rules, src) => this.process(rules, src), {
      afterTurn: () => this.pressure.update(this.queue.length),
    });
    this.inflightLimit = o.inflightLimit ?? 10000;
    this.metrics = o.broker.metrics;
    this.resources = new ResourceManager(this.resourceTypes, o.logger, o.healthCheckMs ?? 10000);
    const idOf = (prefix: string) => (key: string) =>
      key.startsWith(prefix) ? decodeSegment(key.slice(prefix.length)) : undefined;
    const decode = <T>(v: Buffer): T => JSON.parse(v.toString("utf8")) as T;
    this.ruleStore = new StoreMirror<StoredRule>(o.store, {
      prefix: o.keys.rules(),
      idOf: idOf(o.keys.rules()),
      decode,
      onChange: (id, now) => this.ruleChanged(id, now),
      logger: o.logger,
    });
    this.resourceStore = new StoreMirror<StoredResource>(o.store, {
      prefix: o.keys.resources(),
      idOf: idOf(o.keys.resources()),
      decode,
      onChange: (id, now) => this.resourceChanged(id, now),
      logger: o.logger,
    });
    this.env = {
      nodeName: o.broker.nodeName,
      info: (obj, msg) => o.logger.info(obj, msg),
      publish: (m, ruleId) => this.republish(m, ruleId),
      traceHeaders: () => {
        const span = this.actionSpan;
        if (span === undefined || this.tracer === null) return undefined;
        const c = this.tracer.carrier(span);
        return c.tracestate === undefined ? { traceparent: c.traceparent } : { ...c };
      },
    };
    this.tracer = o.tracing == null ? null : new RuleTracing(o.tracing, o.broker.nodeName);
  }

  // ---- lifecycle ------------------------------------------------------------------------------

  /** Plugin load: the hooks go in (for the events the rules need). */
  load(): void {
    this.active = true;
    this.syncHooks();
  }

  unload(): void {
    this.active = false;
    this.syncHooks();
    this.queue.clear();
    this.pressure.update(0);
  }

  /** Reads the store and starts the resources; `alarms`/`stats` come from the node's sys. */
  async start(alarms: AlarmSink, stats: StatSink): Promise<void> {
    this.resources.alarms = alarms;
    this.stats = stats;
    await this.resourceStore.start();
    await Promise.all([...this.resourceStore.values()].map((r) => this.resources.start1(r)));
    this.resources.start();
    await this.ruleStore.start();
    for (const [id, r] of this.ruleStore.entries()) this.build(id, r);
    this.started = true;
    this.reindex();
    this.speedTimer = setInterval(() => {
      const now = Date.now();
      for (const r of this.loaded.values()) r.metrics.tick(now);
    }, 1000);
    this.speedTimer.unref();
  }

  async stop(): Promise<void> {
    this.unload();
    if (this.speedTimer !== undefined) clearInterval(this.speedTimer);
    await this.ruleStore.stop();
    await this.resourceStore.stop();
    await this.resources.stop();
    this.loaded.clear();
  }

  // ---- store writes (the service validates before) -------------------------------------------

  async putRule(r: StoredRule): Promise<void> {
    await this.o.store.put(this.o.keys.rule(r.id), Buffer.from(JSON.stringify(r)));
    this.ruleStore.apply(r.id, r);
  }

  async deleteRule(id: string): Promise<boolean> {
    const existed = await this.o.store.delete(this.o.keys.rule(id));
    this.ruleStore.apply(id, undefined);
    return existed;
  }

  async putResource(r: StoredResource): Promise<void> {
    await this.o.store.put(this.o.keys.resource(r.id), Buffer.from(JSON.stringify(r)));
    this.resourceStore.apply(r.id, r);
  }

  async deleteResource(id: string): Promise<boolean> {
    const existed = await this.o.store.delete(this.o.keys.resource(id));
    this.resourceStore.apply(id, undefined);
    return existed;
  }

  /** Events waiting for evaluation plus rows whose actions are still running. */
  get backlog(): number {
    return this.queue.length + this.inflight;
  }

  /** Zeroes the metrics of a loaded rule and of its actions (fallbacks included). */
  resetMetrics(id: string): void {
    const r = this.loaded.get(id);
    if (r === undefined) return;
    r.metrics.reset();
    const reset = (as: LoadedAction[]) => {
      for (const a of as) {
        a.metrics.reset();
        reset(a.fallbacks);
      }
    };
    reset(r.actions);
  }

  /** The running form of a rule (metrics), undefined when not loaded. */
  loadedRule(id: string): LoadedRule | undefined {
    return this.loaded.get(id);
  }

  // ---- building -------------------------------------------------------------------------------

  private ruleChanged(id: string, now: StoredRule | undefined): void {
    if (!this.started) return;
    if (now === undefined) this.loaded.delete(id);
    else this.build(id, now);
    this.reindex();
  }

  private resourceChanged(id: string, now: StoredResource | undefined): void {
    if (!this.started) return;
    if (now === undefined) void this.resources.remove(id);
    else void this.resources.start1(now);
    this.updateStats();
  }

  private build(id: string, r: StoredRule): void {
    const built = loadRule(id, r, this.loaded.get(id), {
      actions: this.actions,
      env: this.env,
      resource: (resId) => this.resources.get(resId),
      logger: this.o.logger,
    });
    if (built === null) this.loaded.delete(id);
    else this.loaded.set(id, built);
  }

  private reindex(): void {
    this.index = new RuleIndex([...this.loaded.values()].filter((r) => r.record.enabled));
    this.topicRules = new Map();
    this.syncHooks();
    this.updateStats();
  }

  private updateStats(): void {
    if (this.stats === undefined) return;
    let actions = 0;
    for (const r of this.loaded.values()) actions += r.actions.length;
    this.stats.set("rules", this.loaded.size);
    this.stats.set("actions", actions);
    this.stats.set("resources", this.resourceStore.size);
  }

  // ---- hooks ----------------------------------------------------------------------------------

  private syncHooks(): void {
    const want = this.active ? this.index.keys() : new Set<EventKey>();
    const hooks = this.o.broker.hooks;
    for (const k of [...this.hooked]) {
      if (want.has(k)) continue;
      hooks.removeOwner(`${ENGINE_PLUGIN}:${k}`);
      this.hooked.delete(k);
    }
    for (const k of want) {
      if (this.hooked.has(k)) continue;
      const owner = `${ENGINE_PLUGIN}:${k}`;
      if (addEventHook(hooks, k, owner, this.o.broker.nodeName, this.onPublish, (ev, b) => this.fire(ev, b))) {
        this.hooked.add(k);
      }
    }
  }

  /** message.publish (fold): never blocks or changes the message; only looks rules up. */
  private readonly onPublish = (msg: Message): undefined => {
    if (isSysMessage(msg)) return undefined;
    const hit = this.publishRules(msg.topic);
    if (hit.length === 0) return undefined;
    const chain = msg.headers?.[GUARD_HEADER] as readonly string[] | undefined;
    const rules = chain === undefined ? hit : hit.filter((r) => !chain.includes(r.id));
    if (rules.length === 0) return undefined;
    this.enqueue(rules, msg);
    if (msg.qos > 0 && this.queue.length >= this.pressure.highWater) this.o.broker.congested = this.pressure;
    return undefined;
  };

  /** The rules on a publish to `topic` (topic filters, then message.publish), cached per index. */
  private publishRules(topic: string): readonly LoadedRule[] {
    const cache = this.topicRules;
    const cached = cache.get(topic);
    if (cached !== undefined) return cached;
    const idx = this.index;
    const hit = this.scratch;
    idx.matchTopic(topic, hit);
    const ev = idx.events.get("message.publish");
    if (ev !== undefined) for (const r of ev) if (!hit.includes(r)) hit.push(r);
    const rules = hit.slice();
    hit.length = 0;
    if (cache.size >= TOPIC_CACHE_LIMIT) cache.clear();
    cache.set(topic, rules);
    return rules;
  }

  private fire(k: EventKey, build: () => Row): void {
    const rules = this.index.events.get(k);
    if (rules !== undefined) this.enqueue(rules, build);
  }

  private enqueue(rules: readonly LoadedRule[], src: EventSource): void {
    if (this.queue.push(rules, src)) return;
    // Full: whoever brings the event runs the oldest quarter now (back-pressure: a burst slows
    // down to the pace of evaluation, nothing is lost). Not from inside such a run (an action's
    // republish): that event fails instead.
    if (!this.runningNow) {
      this.runningNow = true;
      try {
        this.queue.runNow(Math.max(1, this.queueLimit >> 2));
      } finally {
        this.runningNow = false;
      }
      if (this.queue.push(rules, src)) return;
    }
    for (const r of rules) this.failAll(r);
  }

  /** Overload: the rule's actions fail without running. */
  private failAll(r: LoadedRule): void {
    r.metrics.matched++;
    r.metrics.failed++;
    this.metrics.inc(RULES_MATCHED);
    for (const a of r.actions) {
      a.metrics.failed++;
      this.metrics.inc(ACTIONS_FAILURE);
    }
  }

  // ---- the worker -----------------------------------------------------------------------------

  private process(rules: readonly LoadedRule[], src: EventSource): void {
    const msg = typeof src === "function" ? null : src;
    let ctx: Row;
    try {
      ctx = msg === null ? (src as () => Row)() : C.publishCtx(msg, this.o.broker.nodeName);
    } catch (err) {
      this.o.logger.error({ err }, "rule event context failed");
      return;
    }
    const chain = msg === null ? undefined : (msg.headers?.[GUARD_HEADER] as readonly string[] | undefined);
    const tr = this.tracer;
    // One root frame for every rule of the event: the payload is JSON-decoded at most once.
    const root = new Frame(ctx, null);
    this.metrics.add(RULES_MATCHED, rules.length);
    for (const r of rules) {
      const m = r.metrics;
      m.matched++;
      const span = tr === null ? undefined : tr.rule(msg, r.id, "message.publish");
      // A SELECT gives one row (no array); FOREACH gives rows.
      const select = r.compiled.selectIn;
      let row: Row | null = null;
      let rows: Row[] | null = null;
      try {
        root.dict = null;
        if (select !== null) row = select(root);
        else rows = r.compiled.evaluateIn(root);
      } catch (err) {
        m.failed++;
        m.exception++;
        this.o.logger.debug({ rule: r.id, reason: (err as Error).message }, "rule evaluation failed");
        if (span !== undefined) tr?.endRule(span, "failed", 0, err);
        continue;
      }
      if (row === null && rows === null) {
        m.no_result++;
        if (span !== undefined) tr?.endRule(span, "no_result", 0);
        continue;
      }
      m.passed++;
      if (row !== null) this.runRow(r, row, ctx, chain, span);
      else for (const x of rows as Row[]) this.runRow(r, x, ctx, chain, span);
      if (span !== undefined) tr?.endRule(span, "passed", row !== null ? 1 : (rows as Row[]).length);
    }
  }

  /** One selected row: its actions, unless too many rows are in flight (they fail, counted). */
  private runRow(
    r: LoadedRule,
    row: Row,
    ctx: Row,
    chain: readonly string[] | undefined,
    span: Span | undefined,
  ): void {
    if (this.inflight >= this.inflightLimit) {
      for (const a of r.actions) this.count(a, false);
      return;
    }
    // Synchronous actions (inspect, republish...) finish here without a promise; only an
    // action that answers with one (a web hook) continues asynchronously.
    let pending: Promise<void> | undefined;
    this.enterGuard(chain, r.id);
    try {
      pending = this.runActions(r, row, ctx, chain, span);
    } finally {
      this.leaveGuard();
    }
    if (pending !== undefined) {
      this.inflight++;
      void pending.finally(() => this.inflight--);
    }
  }

  /** Runs the rule's actions in order; a promise only once an action needed one. */
  private runActions(
    r: LoadedRule,
    row: Row,
    ctx: Row,
    chain: readonly string[] | undefined,
    span: Span | undefined,
  ): Promise<void> | undefined {
    const acts = r.actions;
    for (let i = 0; i < acts.length; i++) {
      const ok = this.runAction(acts[i], row, ctx, span);
      if (ok === true) continue;
      if (ok !== false) return this.continueActions(r, row, ctx, chain, span, i, ok);
      const fallbacks = acts[i].fallbacks;
      for (let f = 0; f < fallbacks.length; f++) {
        const fb = this.runAction(fallbacks[f], row, ctx, span);
        if (typeof fb !== "boolean") {
          return this.continueActions(
            r,
            row,
            ctx,
            chain,
            span,
            i,
            fb.then(() => false),
            f,
          );
        }
      }
      if (r.record.on_action_failed === "stop") return undefined;
    }
    return undefined;
  }

  /** The asynchronous remainder of runActions, from action `i` whose outcome `first` carries. */
  private async continueActions(
    r: LoadedRule,
    row: Row,
    ctx: Row,
    chain: readonly string[] | undefined,
    span: Span | undefined,
    i: number,
    first: Promise<boolean>,
    fallbacksDone = -1,
  ): Promise<void> {
    const acts = r.actions;
    const run = (a: LoadedAction): boolean | Promise<boolean> => {
      // The loop guard of the event again (runRow's ended when it returned).
      this.enterGuard(chain, r.id);
      try {
        return this.runAction(a, row, ctx, span);
      } finally {
        this.leaveGuard();
      }
    };
    for (let k = i; k < acts.length; k++) {
      const a = acts[k];
      const ok = k === i ? await first : await run(a);
      if (ok) continue;
      const from = k === i ? fallbacksDone + 1 : 0;
      for (let f = from; f < a.fallbacks.length; f++) await run(a.fallbacks[f]);
      if (r.record.on_action_failed === "stop") break;
    }
  }

  /** While actions of `rule` run synchronously: the loop guard their republished messages carry. */
  private enterGuard(chain: readonly string[] | undefined, rule: string): void {
    this.chain = chain;
    this.chainRule = rule;
  }

  private leaveGuard(): void {
    this.chain = undefined;
    this.chainRule = undefined;
  }

  /**
   * One action (the loop guard of its event is set by the caller): its outcome, or a promise of
   * it when the action answered with a promise.
   */
  private runAction(a: LoadedAction, row: Row, ctx: Row, ruleSpan: Span | undefined): boolean | Promise<boolean> {
    a.metrics.taken++;
    const tr = this.tracer;
    const span = ruleSpan === undefined || tr === null ? undefined : tr.action(ruleSpan, a.record.name, a.record.id);
    let out: void | Promise<void>;
    try {
      const fn = a.fn;
      if (fn === null) throw new Error(`action ${a.record.name} is not available`);
      if (span === undefined) out = fn(row, ctx);
      else {
        this.actionSpan = span;
        try {
          out = (tr as RuleTracing).with(span, () => fn(row, ctx));
        } finally {
          this.actionSpan = undefined;
        }
      }
    } catch (err) {
      return this.settle(a, false, err, span);
    }
    if (out instanceof Promise) {
      return out.then(
        () => this.settle(a, true, null, span),
        (err: unknown) => this.settle(a, false, err, span),
      );
    }
    return this.settle(a, true, null, span);
  }

  private settle(a: LoadedAction, ok: boolean, err: unknown, span: Span | undefined): boolean {
    if (span !== undefined) this.tracer?.endAction(span, ok, err);
    if (!ok) this.o.logger.debug({ action: a.record.id, reason: (err as Error)?.message }, "rule action failed");
    this.count(a, ok);
    if (a.resource !== null) this.resources.reportOutcome(a.resource, ok);
    return ok;
  }

  private count(a: LoadedAction, ok: boolean): void {
    if (ok) a.metrics.success++;
    else a.metrics.failed++;
    this.metrics.inc(ok ? ACTIONS_SUCCESS : ACTIONS_FAILURE);
  }

  /** republish: a new message carrying the loop guard of the rules that made it. */
  private republish(m: NewMessage, ruleId: string): Message {
    const msg = makeMessage(m);
    // The chain of the event plus the rule whose action runs (only ruleId outside an action).
    const rule = this.chainRule;
    const chain = this.chain;
    msg.headers = {
      [GUARD_HEADER]: rule === undefined ? [ruleId] : chain === undefined ? [rule] : [...chain, rule],
    };
    this.o.broker.publish(msg);
    return msg;
  }
}
