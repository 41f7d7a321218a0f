// Actions: what a rule does with each selected row. A definition (code or a plugin supplies it)
// declares its parameters, the hooks it is `for` and the resource types it binds to (`types`);
// `create` turns one rule's parameters into the function the engine calls per row.

import type { Message, NewMessage } from "../../broker/types.ts";
import type { ParamSpec } from "../engine/records.ts";
import type { ResourceInstance } from "../resources/types.ts";
import type { Row } from "../runtime/values.ts";

/** What actions may use from the node. */
export interface ActionEnv {
  readonly nodeName: string;
  info(obj: object, msg: string): void;
  /** Publishes a message made by a rule (the loop guard is added from `ruleId`). */
  publish(m: NewMessage, ruleId: string): Message;
  /**
   * W3C trace context of the running action (`traceparent`, `tracestate`) when its message is
   * traced, for outgoing requests; read it before the action's first await.
   */
  traceHeaders(): Record<string, string> | undefined;
}

export interface ActionContext {
  readonly ruleId: string;
  readonly actionId: string;
  readonly env: ActionEnv;
  /** The bound resource's running instance (undefined when not (yet) running on this node). */
  resource(): ResourceInstance | undefined;
}

/**
 * Runs the action for one selected row; `ctx` is the event the row came from. Throws/rejects on
 * failure. Both are read-only: the actions of a rule share the row, and a `SELECT *` row is the
 * event's columns themselves, shared by every rule of the event.
 */
export type ActionFn = (data: Row, ctx: Row) => void | Promise<void>;

export interface ActionDef {
  readonly name: string;
  readonly app: string;
  readonly category: string;
  /** A hook name, `$events` or `$any`. */
  readonly for: string;
  /** Resource types it binds to (empty: none). */
  readonly types: readonly string[];
  readonly title: string;
  readonly description: string;
  readonly params: Readonly<Record<string, ParamSpec>>;
  /** A problem with params beyond the descriptors, or null. */
  validate?(params: Record<string, unknown>): string | null;
  create(params: Record<string, unknown>, ctx: ActionContext): ActionFn;
}

/** Thrown by actions for an expected failure (reported without a stack). */
export class ActionError extends Error {
  override readonly name = "ActionError";
}
