// The rule engine's SQL half, as the rest of svc sees it: compile a rule once
// (compileRule -> CompiledRule: its FROM sources and evaluate(ctx)), the event catalogue and
// the rule test, `${var}` templates for actions, and the two error kinds (SqlError when a
// statement does not compile, RuleEvalError when evaluating one event fails).

export { EVENT_KEYS, EVENT_TOPICS, type EventKey, eventsOfSource } from "./event-names.ts";
export {
  DEFAULT_NODE,
  exampleContext,
  type I18nText,
  RULE_EVENTS,
  type RuleEventInfo,
  type RuleTestOptions,
  type RuleTestResult,
  ruleEvent,
  ruleTest,
  testEventOf,
} from "./events.ts";
export { type CompiledRule, compileRule, type RuleSources } from "./runtime/compile.ts";
export { RuleEvalError } from "./runtime/errors.ts";
export { functionNames } from "./runtime/functions/index.ts";
export { clearKvStore } from "./runtime/functions/misc.ts";
export { compileTemplate, renderTemplate, renderValue, type Template, templateVars } from "./runtime/placeholders.ts";
export { jsonEncode, type Row, toText } from "./runtime/values.ts";
export { SqlError } from "./sql/errors.ts";
export { parseCount, parseSql } from "./sql/parser.ts";
