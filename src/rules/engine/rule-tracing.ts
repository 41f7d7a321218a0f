// Spans of the rule engine (`telemetry.tracing = on`): a traced message (its publish span's context
// in `msg.headers`) that a rule matches gets
//   rule <rule id>      (internal)  the evaluation of the rule's SQL, child of the publish span
//   action <name>       (internal)  each action run for a selected row, child of the rule span;
//                                   it is the active span while the action runs (a republished
//                                   message continues the trace) and web-hook requests carry it
//                                   as `traceparent`/`tracestate` headers
// Untraced messages and events without a message make nothing. The rule span ends with the
// evaluation; action spans end when the action settles (an asynchronous one outlives its parent).

import type { Message } from "../../broker/types.ts";
import { carrierOfHeaders, type Span, type TraceCarrier, type Tracing } from "../../telemetry/tracing.ts";

export type RuleOutcome = "passed" | "no_result" | "failed";

export class RuleTracing {
  constructor(
    private readonly t: Tracing,
    private readonly nodeName: string,
  ) {}

  /** The rule span of a traced message, undefined when the message carries no trace context. */
  rule(msg: Message | null, ruleId: string, event: string): Span | undefined {
    const parent = carrierOfHeaders(msg?.headers);
    if (parent === undefined) return undefined;
    const span = this.t.startSampled("rule ", ruleId, { kind: "internal", parent });
    span?.setAttributes({
      "svc.rule.id": ruleId,
      "svc.rule.event": event,
      "messaging.destination.name": (msg as Message).topic,
      "svc.node": this.nodeName,
    });
    return span;
  }

  /** Ends a rule span with its outcome and the number of rows selected. */
  endRule(span: Span, outcome: RuleOutcome, rows: number, err?: unknown): void {
    span.setAttribute("svc.rule.outcome", outcome).setAttribute("svc.rule.rows", rows);
    if (err !== undefined) this.t.fail(span, err);
    span.end();
  }

  /** The span of one action run under a rule span. */
  action(parent: Span, name: string, actionId: string): Span {
    return this.t.start(`action ${name}`, {
      kind: "internal",
      parent,
      attributes: { "svc.action.name": name, "svc.action.id": actionId, "svc.node": this.nodeName },
    });
  }

  /** Runs `fn` with `span` active. */
  with<R>(span: Span, fn: () => R): R {
    return this.t.with(span, fn);
  }

  /** Ends an action span: an error status when the action failed. */
  endAction(span: Span, ok: boolean, err: unknown): void {
    if (!ok) this.t.fail(span, err ?? new Error("action failed"));
    span.end();
  }

  /** The W3C carrier of a span (for HTTP headers). */
  carrier(span: Span): TraceCarrier {
    return this.t.carrier(span);
  }
}
