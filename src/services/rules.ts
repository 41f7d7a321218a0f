// Rules, actions, resource types and resources for the API and CLI (spec 000 §2 and §4,
// emqx-facts §1.4 and §2): validation, ids (`rule:<8 hex>`, `resource:<8 hex>`, or the first
// variant's `<name>:<number>` and `<type>:<name>`), the views in the spec's shapes with the
// metrics and liveness of every running node (one entry per node, gathered through the cluster
// calls `mgmt.ruleMetrics` and `mgmt.resourceAlive`; a node that does not answer is left out), the
// rule test and the event catalogue. The runtime is the rule engine's (src/rules/engine); records
// go to the cluster store through it.

import { randomBytes } from "node:crypto";
import { matchTopic } from "../mqtt/topic.ts";
import type { ActionDef } from "../rules/actions/types.ts";
import type { RuleEngine } from "../rules/engine/engine.ts";
import type { RuleMetricsView } from "../rules/engine/metrics.ts";
import {
  checkParams,
  type OnActionFailed,
  type ParamSpec,
  type StoredAction,
  type StoredResource,
  type StoredRule,
  withDefaults,
} from "../rules/engine/records.ts";
import { compileRule, eventsOfSource, RULE_EVENTS, type RuleTestResult, ruleTest, SqlError } from "../rules/index.ts";
import { type ClusterCalls, fromEvery, LocalCalls } from "./cluster-calls.ts";

type ActionMetricsView = { node: string; success: number; failed: number; taken: number };
/** One node's metrics of some rules: per rule, its own and its actions' (fallbacks included). */
type NodeRuleMetrics = Record<string, { rule: RuleMetricsView; actions: Record<string, ActionMetricsView> }>;
/** Every node's metrics of some rules. */
type ClusterRuleMetrics = Map<string, { rules: RuleMetricsView[]; actions: Map<string, ActionMetricsView[]> }>;

const RULE_METRICS = "mgmt.ruleMetrics";
const RESOURCE_ALIVE = "mgmt.resourceAlive";

/** An expected failure: the API answers `status` with `{code: status, message}`. */
export class RuleServiceError extends Error {
  override readonly name = "RuleServiceError";
  constructor(
    readonly status: 400 | 404,
    message: string,
  ) {
    super(message);
  }
}

const bad = (m: string) => new RuleServiceError(400, m);

export interface ActionInput {
  name: string;
  params?: Record<string, unknown>;
  fallbacks?: ActionInput[];
}

export interface RuleInput {
  id?: string;
  name?: string;
  for?: string;
  rawsql: string;
  actions?: ActionInput[];
  description?: string;
  enabled?: boolean;
  on_action_failed?: string;
}

export interface RulePatch {
  rawsql?: string;
  actions?: ActionInput[];
  description?: string;
  enabled?: boolean;
  on_action_failed?: string;
}

/** `GET /rules` filters (emqx-facts §3.2). */
export interface RuleFilter {
  enabled?: boolean;
  for?: string;
  like_id?: string;
  like_for?: string;
  match_for?: string;
  like_description?: string;
}

export interface ResourcePatch {
  config?: Record<string, unknown>;
  description?: string;
}

export interface ResourceInput {
  id?: string;
  name?: string;
  type: string;
  config?: Record<string, unknown>;
  description?: string;
}

export interface ActionView {
  id: string;
  name: string;
  params: Record<string, unknown>;
  fallbacks: ActionView[];
  metrics: { node: string; success: number; failed: number; taken: number }[];
}

export interface RuleView {
  id: string;
  name?: string;
  for: string;
  rawsql: string;
  actions: ActionView[];
  description: string;
  enabled: boolean;
  on_action_failed: OnActionFailed;
  created_at: number;
  metrics: RuleMetricsView[];
}

export interface ActionDefView {
  name: string;
  app: string;
  category: string;
  description: string;
  for: string;
  types: string[];
  title: string;
  params: Record<string, ParamSpec>;
}

export interface ResourceTypeView {
  name: string;
  provider: string;
  title: string;
  description: string;
  params: Record<string, ParamSpec>;
}

export interface ResourceView {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  description: string;
  attrs: string;
  created_at: number;
  status: boolean | { node: string; is_alive: boolean }[];
}

const hex8 = () => randomBytes(4).toString("hex");
let seq = 0;
const uniqueNumber = () => Date.now() * 1000 + (seq++ % 1000);

export class RuleService {
  constructor(
    private readonly engine: RuleEngine,
    private readonly nodeName: string,
    private readonly calls: ClusterCalls = new LocalCalls(nodeName),
  ) {
    calls.register(RULE_METRICS, (args) => this.localMetrics((args as { ids: string[] }).ids));
    calls.register(RESOURCE_ALIVE, (args) => this.engine.resources.isAlive((args as { id: string }).id) ?? null);
  }

  /** This node's metrics of the rules `ids` that it runs. */
  private localMetrics(ids: string[]): NodeRuleMetrics {
    const out: NodeRuleMetrics = {};
    for (const id of ids) {
      const loaded = this.engine.loadedRule(id);
      if (loaded === undefined) continue;
      const actions: Record<string, ActionMetricsView> = {};
      const walk = (as: typeof loaded.actions) => {
        for (const a of as) {
          actions[a.record.id] = a.metrics.view(this.nodeName);
          walk(a.fallbacks);
        }
      };
      walk(loaded.actions);
      out[id] = { rule: loaded.metrics.view(this.nodeName), actions };
    }
    return out;
  }

  /** The metrics of the rules `ids` on every running node that answers, in node order. */
  private async clusterMetrics(ids: string[]): Promise<ClusterRuleMetrics> {
    const out: ClusterRuleMetrics = new Map();
    if (ids.length === 0) return out;
    for (const { value } of await fromEvery<NodeRuleMetrics>(this.calls, RULE_METRICS, { ids })) {
      for (const [id, m] of Object.entries(value ?? {})) {
        let e = out.get(id);
        if (e === undefined) {
          e = { rules: [], actions: new Map() };
          out.set(id, e);
        }
        e.rules.push(m.rule);
        for (const [aid, v] of Object.entries(m.actions)) {
          const list = e.actions.get(aid);
          if (list === undefined) e.actions.set(aid, [v]);
          else list.push(v);
        }
      }
    }
    return out;
  }

  // ---- rules ----------------------------------------------------------------------------------

  /** The rule's `for`: its FROM source (several joined by ","). */
  private forOf(rawsql: string): string {
    return compileRule(rawsql).sources.raw.join(",");
  }

  private compile(rawsql: string): void {
    try {
      compileRule(rawsql);
    } catch (e) {
      if (e instanceof SqlError) throw bad(`Bad Arguments: ${e.message}`);
      throw e;
    }
  }

  private actionsOf(list: ActionInput[] | undefined, stamp: number): StoredAction[] {
    if (!Array.isArray(list)) throw bad("Bad Arguments: actions must be an array");
    return list.map((a, i) => {
      if (typeof a !== "object" || a === null || typeof a.name !== "string")
        throw bad("Bad Arguments: each action needs a name");
      const def = this.engine.actions.get(a.name);
      if (def === undefined) throw new RuleServiceError(400, `Action ${a.name} Not Found`);
      const params = withDefaults(def.params, { ...(a.params ?? {}) });
      const problem = checkParams(def.params, params) ?? def.validate?.(params) ?? null;
      if (problem !== null) throw bad(`Bad Arguments: ${a.name}: ${problem}`);
      const res = params.$resource;
      if (def.types.length > 0) {
        const r = typeof res === "string" ? this.engine.resourceStore.get(res) : undefined;
        if (r === undefined) throw bad(`Bad Arguments: Resource ${String(res)} Not Found`);
        if (!def.types.includes(r.type))
          throw bad(`Bad Arguments: action ${a.name} needs a resource of type ${def.types.join(" or ")}`);
      }
      return {
        id: `${a.name}_${stamp + i}`,
        name: a.name,
        params,
        fallbacks: this.actionsOf(a.fallbacks ?? [], stamp + 1000 * (i + 1)),
      };
    });
  }

  private onFailed(v: string | undefined, dflt: OnActionFailed): OnActionFailed {
    if (v === undefined) return dflt;
    if (v !== "continue" && v !== "stop") throw bad("Bad Arguments: on_action_failed must be continue or stop");
    return v;
  }

  async createRule(b: RuleInput): Promise<RuleView> {
    if (typeof b.rawsql !== "string" || b.rawsql.trim() === "") throw bad("Bad Arguments: rawsql is required");
    this.compile(b.rawsql);
    if (b.id !== undefined && b.id === "") throw bad("Bad Arguments: empty id");
    const id = b.id ?? (b.name !== undefined && b.name !== "" ? `${b.name}:${uniqueNumber()}` : `rule:${hex8()}`);
    if (this.engine.ruleStore.get(id) !== undefined) throw bad("Already Exists");
    const rule: StoredRule = {
      id,
      rawsql: b.rawsql,
      actions: this.actionsOf(b.actions ?? [], Number(process.hrtime.bigint() % 10n ** 15n)),
      description: b.description ?? "",
      enabled: b.enabled ?? true,
      on_action_failed: this.onFailed(b.on_action_failed, "continue"),
      created_at: Date.now(),
    };
    if (b.name !== undefined) rule.name = b.name;
    await this.engine.putRule(rule);
    return this.ruleView(rule);
  }

  async updateRule(id: string, p: RulePatch): Promise<RuleView> {
    const cur = this.engine.ruleStore.get(id);
    if (cur === undefined) throw new RuleServiceError(404, `Rule Id Not Found: ${id}`);
    const next: StoredRule = { ...cur };
    if (p.rawsql !== undefined) {
      this.compile(p.rawsql);
      next.rawsql = p.rawsql;
    }
    if (p.actions !== undefined) next.actions = this.actionsOf(p.actions, Number(process.hrtime.bigint() % 10n ** 15n));
    if (p.description !== undefined) next.description = p.description;
    if (p.enabled !== undefined) next.enabled = p.enabled;
    next.on_action_failed = this.onFailed(p.on_action_failed, cur.on_action_failed);
    await this.engine.putRule(next);
    return this.ruleView(next);
  }

  /** Rules, newest first, those `f` selects (a `for` with several sources matches on any). */
  async listRules(f: RuleFilter = {}): Promise<RuleView[]> {
    const sourcesOf = (rawsql: string): readonly string[] => {
      try {
        return compileRule(rawsql).sources.raw;
      } catch {
        return [];
      }
    };
    const rules = [...this.engine.ruleStore.values()]
      .filter((r) => {
        if (f.enabled !== undefined && r.enabled !== f.enabled) return false;
        if (f.like_id !== undefined && !r.id.includes(f.like_id)) return false;
        if (f.like_description !== undefined && !r.description.includes(f.like_description)) return false;
        if (f.for === undefined && f.like_for === undefined && f.match_for === undefined) return true;
        const src = sourcesOf(r.rawsql);
        if (f.for !== undefined && !src.includes(f.for)) return false;
        if (f.like_for !== undefined && !src.some((x) => x.includes(f.like_for as string))) return false;
        const m = f.match_for;
        if (m !== undefined && !src.some((x) => x === m || matchTopic(m, x))) return false;
        return true;
      })
      .sort((a, b) => b.created_at - a.created_at || a.id.localeCompare(b.id));
    const metrics = await this.clusterMetrics(rules.map((r) => r.id));
    return rules.map((r) => this.ruleView(r, metrics.get(r.id)));
  }

  /** Zeroes the rule's metrics and its actions' on this node. */
  resetMetrics(id: string): void {
    if (this.engine.ruleStore.get(id) === undefined) throw new RuleServiceError(404, `Rule Id Not Found: ${id}`);
    this.engine.resetMetrics(id);
  }

  async getRule(id: string): Promise<RuleView> {
    const r = this.engine.ruleStore.get(id);
    if (r === undefined) throw new RuleServiceError(404, `Rule Id Not Found: ${id}`);
    return this.ruleView(r, (await this.clusterMetrics([id])).get(id));
  }

  async deleteRule(id: string): Promise<void> {
    if (!(await this.engine.deleteRule(id))) throw new RuleServiceError(404, `Rule Id Not Found: ${id}`);
  }

  testRule(rawsql: string, ctx: Record<string, unknown> | undefined): RuleTestResult {
    return ruleTest(rawsql, ctx ?? {}, { node: this.nodeName });
  }

  /** The rule's view with `gathered` metrics (every node's), or else this node's. */
  private ruleView(
    r: StoredRule,
    gathered?: { rules: RuleMetricsView[]; actions: Map<string, ActionMetricsView[]> },
  ): RuleView {
    const m = gathered ?? this.clusterMetricsOfThisNode(r.id);
    const action = (a: StoredAction): ActionView => ({
      id: a.id,
      name: a.name,
      params: a.params,
      fallbacks: (a.fallbacks ?? []).map(action),
      metrics: m?.actions.get(a.id) ?? [{ node: this.nodeName, success: 0, failed: 0, taken: 0 }],
    });
    let forText: string;
    try {
      forText = this.forOf(r.rawsql);
    } catch {
      forText = "";
    }
    const view: RuleView = {
      id: r.id,
      for: forText,
      rawsql: r.rawsql,
      actions: r.actions.map(action),
      description: r.description,
      enabled: r.enabled,
      on_action_failed: r.on_action_failed,
      created_at: r.created_at,
      metrics: m?.rules ?? [
        {
          node: this.nodeName,
          matched: 0,
          passed: 0,
          failed: 0,
          exception: 0,
          no_result: 0,
          speed: 0,
          speed_max: 0,
          speed_last5m: 0,
        },
      ],
    };
    if (r.name !== undefined) view.name = r.name;
    return view;
  }

  /** This node's metrics of one rule in the gathered form (undefined when it does not run it). */
  private clusterMetricsOfThisNode(
    id: string,
  ): { rules: RuleMetricsView[]; actions: Map<string, ActionMetricsView[]> } | undefined {
    const m = this.localMetrics([id])[id];
    if (m === undefined) return undefined;
    return { rules: [m.rule], actions: new Map(Object.entries(m.actions).map(([k, v]) => [k, [v]])) };
  }

  // ---- actions and resource types -------------------------------------------------------------

  private actionView(a: ActionDef): ActionDefView {
    return {
      name: a.name,
      app: a.app,
      category: a.category,
      description: a.description,
      for: a.for,
      types: [...a.types],
      title: a.title,
      params: { ...a.params },
    };
  }

  /** Actions, those usable for `hook` when given (`$any` ones always; `$events` ones for events). */
  listActions(hook?: string): ActionDefView[] {
    const all = [...this.engine.actions.values()];
    if (hook === undefined || hook === "") return all.map((a) => this.actionView(a));
    const keys = eventsOfSource(hook) ?? (hook === "$events" ? [] : ["message.publish"]);
    return all
      .filter((a) => {
        if (a.for === "$any" || a.for === hook) return true;
        if (a.for === "$events") return hook === "$events" || keys.some((k) => k !== "message.publish");
        const own = eventsOfSource(a.for) ?? [];
        return own.some((k) => (keys as readonly string[]).includes(k));
      })
      .map((a) => this.actionView(a));
  }

  getAction(name: string): ActionDefView {
    const a = this.engine.actions.get(name);
    if (a === undefined) throw new RuleServiceError(404, `Action Not Found: ${name}`);
    return this.actionView(a);
  }

  listResourceTypes(): ResourceTypeView[] {
    return [...this.engine.resourceTypes.values()].map((t) => ({
      name: t.name,
      provider: t.provider,
      title: t.title,
      description: t.description,
      params: { ...t.params },
    }));
  }

  getResourceType(name: string): ResourceTypeView {
    const t = this.listResourceTypes().find((x) => x.name === name);
    if (t === undefined) throw new RuleServiceError(404, `Resource Type Not Found: ${name}`);
    return t;
  }

  actionsOfType(type: string): ActionDefView[] {
    this.getResourceType(type);
    return [...this.engine.actions.values()].filter((a) => a.types.includes(type)).map((a) => this.actionView(a));
  }

  resourcesOfType(type: string): ResourceView[] {
    this.getResourceType(type);
    return this.listResources().filter((r) => r.type === type);
  }

  // ---- resources ------------------------------------------------------------------------------

  private checkResource(b: ResourceInput): { config: Record<string, unknown> } {
    const t = typeof b.type === "string" ? this.engine.resourceTypes.get(b.type) : undefined;
    if (t === undefined) throw bad(`Bad Arguments: Resource Type Not Found: ${String(b.type)}`);
    const config = withDefaults(t.params, { ...(b.config ?? {}) });
    const problem = checkParams(t.params, config) ?? t.validate(config);
    if (problem !== null) throw bad(`Bad Arguments: ${problem}`);
    return { config };
  }

  /** Creates a resource; `test` only connects once (dry run) and stores nothing. */
  async createResource(b: ResourceInput, test = false): Promise<ResourceView | undefined> {
    const { config } = this.checkResource(b);
    if (test) {
      const t = this.engine.resourceTypes.get(b.type)!;
      const inst = t.create("test", config);
      try {
        if (!(await inst.healthCheck())) throw bad("Bad Arguments: test resource failed: not reachable");
      } finally {
        await inst.stop();
      }
      return undefined;
    }
    if (b.id !== undefined && b.id === "") throw bad("Bad Arguments: empty id");
    const id = b.id ?? (b.name !== undefined && b.name !== "" ? `${b.type}:${b.name}` : `resource:${hex8()}`);
    if (this.engine.resourceStore.get(id) !== undefined) throw bad("Already Exists");
    const r: StoredResource = { id, type: b.type, config, description: b.description ?? "", created_at: Date.now() };
    if (b.name !== undefined) r.name = b.name;
    await this.engine.putResource(r);
    await this.engine.resources.start1(r);
    return this.resourceView(r, true);
  }

  /** Changes a resource's config and/or description, then restarts it on this node (the others
   * restart from the store's change). */
  async updateResource(id: string, p: ResourcePatch): Promise<ResourceView> {
    const cur = this.engine.resourceStore.get(id);
    if (cur === undefined) throw new RuleServiceError(404, `Resource Not Found: ${id}`);
    const next: StoredResource = { ...cur };
    if (p.config !== undefined) {
      if (typeof p.config !== "object" || p.config === null || Array.isArray(p.config))
        throw bad("Bad Arguments: config must be an object");
      next.config = this.checkResource({ type: cur.type, config: p.config }).config;
    }
    if (p.description !== undefined) next.description = p.description;
    await this.engine.putResource(next);
    await this.engine.resources.start1(next);
    return this.resourceView(next, true);
  }

  listResources(): ResourceView[] {
    return [...this.engine.resourceStore.values()]
      .sort((a, b) => b.created_at - a.created_at || a.id.localeCompare(b.id))
      .map((r) => this.resourceView(r, false));
  }

  /** A resource with its liveness on every running node that answers. */
  async getResource(id: string): Promise<ResourceView> {
    const r = this.engine.resourceStore.get(id);
    if (r === undefined) throw new RuleServiceError(404, `Resource Not Found: ${id}`);
    const view = this.resourceView(r, true);
    const alive = await fromEvery<boolean | null>(this.calls, RESOURCE_ALIVE, { id });
    view.status = alive.map(({ node, value }) => ({ node, is_alive: value === true }));
    return view;
  }

  async deleteResource(id: string): Promise<void> {
    if (this.engine.resourceStore.get(id) === undefined) throw new RuleServiceError(404, `Resource Not Found: ${id}`);
    const users = [...this.engine.ruleStore.values()]
      .filter((r) => r.enabled && usesResource(r.actions, id))
      .map((r) => r.id);
    if (users.length > 0)
      throw bad(
        `Found rules [${users.map((u) => `<<"${u}">>`).join(",")}] depends on this resource, disable them first`,
      );
    await this.engine.deleteResource(id);
  }

  /** Restarts the resource on this node; false when it is still not alive. */
  async startResource(id: string): Promise<boolean> {
    const r = this.engine.resourceStore.get(id);
    if (r === undefined) throw new RuleServiceError(404, `Resource Not Found: ${id}`);
    return this.engine.resources.start1(r);
  }

  resourceStatus(id: string): { is_alive: boolean } {
    const alive = this.engine.resources.isAlive(id);
    if (this.engine.resourceStore.get(id) === undefined || alive === undefined) throw bad(`Resource ${id} Not Found`);
    return { is_alive: alive };
  }

  private resourceView(r: StoredResource, perNode: boolean): ResourceView {
    const alive = this.engine.resources.isAlive(r.id) ?? false;
    return {
      id: r.id,
      name: r.name ?? r.id,
      type: r.type,
      config: r.config,
      description: r.description,
      attrs: "undefined",
      created_at: r.created_at,
      status: perNode ? [{ node: this.nodeName, is_alive: alive }] : alive,
    };
  }

  // ---- events ---------------------------------------------------------------------------------

  ruleEvents(): {
    event: string;
    title: { en: string; zh: string };
    description: { en: string; zh: string };
    columns: string[];
    test_columns: Record<string, unknown>;
    sql_example: string;
  }[] {
    return RULE_EVENTS.map((e) => ({
      event: e.topic,
      title: { ...e.title },
      description: { ...e.description },
      columns: [...e.columns],
      test_columns: { ...e.testColumns },
      sql_example: e.sqlExample,
    }));
  }
}

function usesResource(actions: readonly StoredAction[], id: string): boolean {
  return actions.some((a) => a.params.$resource === id || usesResource(a.fallbacks ?? [], id));
}
