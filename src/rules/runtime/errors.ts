// RuleEvalError: a rule failed while evaluating one event (the family's "rule exception"):
// a payload path into a non-JSON payload, a function given the wrong kind of value, `1 + 'a'`,
// division by zero... The engine counts it as `failed`/`exception`; the rule test answers 400.

export class RuleEvalError extends Error {
  override readonly name = "RuleEvalError";
  /** The family's error term in words, e.g. `decode_json_failed: ...`. */
  readonly reason: string;

  constructor(reason: string) {
    super(reason);
    this.reason = reason;
  }
}
