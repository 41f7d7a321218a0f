// The running form of a stored rule: its SQL compiled once and its actions (fallbacks included)
// created from their definitions. Built when a rule is loaded or changes; the metrics of the rule
// and of actions that keep their id carry over from the form it replaces.

import type { Logger } from "../../telemetry/logger.ts";
import type { ActionDef, ActionEnv, ActionFn } from "../actions/types.ts";
import type { ResourceInstance } from "../resources/types.ts";
import { type CompiledRule, compileRule } from "../runtime/compile.ts";
import { ActionMetrics, RuleMetrics } from "./metrics.ts";
import type { StoredAction, StoredRule } from "./records.ts";

export interface LoadedAction {
  readonly record: StoredAction;
  readonly def: ActionDef | undefined;
  readonly fn: ActionFn | null;
  readonly metrics: ActionMetrics;
  readonly fallbacks: LoadedAction[];
  /** The resource the action uses (`$resource`), or null. */
  readonly resource: string | null;
}

export interface LoadedRule {
  readonly id: string;
  readonly record: StoredRule;
  readonly compiled: CompiledRule;
  readonly actions: LoadedAction[];
  readonly metrics: RuleMetrics;
}

export interface LoadDeps {
  /** Action definitions by name (built-in and from plugins). */
  actions: ReadonlyMap<string, ActionDef>;
  env: ActionEnv;
  /** A resource's running instance on this node. */
  resource(id: string): ResourceInstance | undefined;
  logger: Logger;
}

/**
 * The running form of rule `id`, or null when its SQL does not compile (logged). An action whose
 * definition is unknown or refuses its parameters is kept without a function (it fails when run).
 */
export function loadRule(id: string, r: StoredRule, before: LoadedRule | undefined, deps: LoadDeps): LoadedRule | null {
  let compiled: CompiledRule;
  try {
    compiled = compileRule(r.rawsql);
  } catch (err) {
    deps.logger.error({ err, rule: id }, "stored rule does not compile, not loaded");
    return null;
  }
  const prevActions = new Map((before?.actions ?? []).map((a) => [a.record.id, a.metrics]));
  const mk = (a: StoredAction): LoadedAction => {
    const def = deps.actions.get(a.name);
    let fn: ActionFn | null = null;
    const resId = typeof a.params.$resource === "string" ? a.params.$resource : undefined;
    if (def !== undefined) {
      try {
        fn = def.create(a.params, {
          ruleId: id,
          actionId: a.id,
          env: deps.env,
          resource: () => (resId === undefined ? undefined : deps.resource(resId)),
        });
      } catch (err) {
        deps.logger.error({ err, rule: id, action: a.name }, "action cannot be created");
      }
    }
    return {
      record: a,
      def,
      fn,
      metrics: prevActions.get(a.id) ?? new ActionMetrics(),
      fallbacks: (a.fallbacks ?? []).map(mk),
      resource: resId ?? null,
    };
  };
  return { id, record: r, compiled, actions: r.actions.map(mk), metrics: before?.metrics ?? new RuleMetrics() };
}
