// The SQL operators' semantics (emqx-facts 1.1), shared by the compiled expressions and the
// operator functions ('+'(a, b), mod, eq):
//   + - * /    numbers; `+` on two strings concatenates; number + string is the error
//              `unsupported_type_implicit_conversion`; other operand types are
//              `unsupported_function_operator_type`; division by zero is `badarith`
//   div, mod   integers only: truncating division and remainder (sign of the dividend)
//   = != <>    Erlang `==` after coercion; < > <= >= Erlang term order after coercion
//   =~         the left topic matches the right filter
// Coercion before comparing: number vs string parses the string (not a number: an error);
// boolean vs string compares the boolean's name; null (undefined) only equals null, `<`/`>`
// involving null are false, `<=`/`>=` hold only for null vs null.

import { matchTopic } from "../../mqtt/topic.ts";
import type { CompareOp } from "../sql/ast.ts";
import { RuleEvalError } from "./errors.ts";
import { isInteger, isNull, parseNumber, short, termCompare, termEqual, textOf } from "./values.ts";

function opTypeError(op: string, a: unknown, b: unknown): never {
  throw new RuleEvalError(`unsupported_function_operator_type: ${short(a)} ${op} ${short(b)}`);
}

export function add(a: unknown, b: unknown): unknown {
  if (typeof a === "number" && typeof b === "number") return a + b;
  const ta = textOf(a);
  const tb = textOf(b);
  if (ta !== null && tb !== null) return ta + tb;
  if ((typeof a === "number" && tb !== null) || (ta !== null && typeof b === "number")) {
    throw new RuleEvalError("unsupported_type_implicit_conversion");
  }
  return opTypeError("+", a, b);
}

export function sub(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a - b;
  return opTypeError("-", a, b);
}

export function mul(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") return a * b;
  return opTypeError("*", a, b);
}

export function divide(a: unknown, b: unknown): number {
  if (typeof a === "number" && typeof b === "number") {
    if (b === 0) throw new RuleEvalError("badarith: division by zero");
    return a / b;
  }
  return opTypeError("/", a, b);
}

export function intDiv(a: unknown, b: unknown): number {
  if (isInteger(a) && isInteger(b)) {
    if (b === 0) throw new RuleEvalError("badarith: division by zero");
    return Math.trunc(a / b) + 0;
  }
  return opTypeError("div", a, b);
}

export function rem(a: unknown, b: unknown): number {
  if (isInteger(a) && isInteger(b)) {
    if (b === 0) throw new RuleEvalError("badarith: division by zero");
    return (a % b) + 0;
  }
  return opTypeError("mod", a, b);
}

export function negate(a: unknown): number {
  if (typeof a === "number") return -a + 0;
  throw new RuleEvalError(`badarith: -${short(a)}`);
}

function toNumberForCompare(v: unknown): number {
  const t = textOf(v)!;
  const n = parseNumber(t);
  if (n === null) throw new RuleEvalError(`bad_number: ${short(t)}`);
  return n;
}

/** `l op r` for the comparison operators. */
export function compare(op: CompareOp, l: unknown, r: unknown): boolean {
  if (isNull(l) || isNull(r)) {
    const both = isNull(l) && isNull(r);
    switch (op) {
      case "!=":
      case "<>":
        return !both;
      case "<":
      case ">":
        return false;
      case "~=":
        throw new RuleEvalError("unsupported_operator: ~=");
      default:
        return both;
    }
  }
  if (typeof l === "number") {
    if (textOf(r) !== null) r = toNumberForCompare(r);
  } else if (typeof r === "number") {
    if (textOf(l) !== null) l = toNumberForCompare(l);
  } else if (typeof l === "boolean") {
    if (textOf(r) !== null) l = String(l);
  } else if (typeof r === "boolean") {
    if (textOf(l) !== null) r = String(r);
  }
  switch (op) {
    case "=":
      return termEqual(l, r);
    case "!=":
    case "<>":
      return !termEqual(l, r);
    case "<":
      return termCompare(l, r) < 0;
    case ">":
      return termCompare(l, r) > 0;
    case "<=":
      return termEqual(l, r) || termCompare(l, r) < 0;
    case ">=":
      return termEqual(l, r) || termCompare(l, r) > 0;
    case "=~": {
      const topic = textOf(l);
      const filter = textOf(r);
      return topic !== null && filter !== null && matchTopic(filter, topic);
    }
    default:
      throw new RuleEvalError(`unsupported_operator: ${op}`);
  }
}
