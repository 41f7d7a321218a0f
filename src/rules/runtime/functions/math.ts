// Math functions (emqx-facts 1.2): abs, trigonometric and hyperbolic functions, ceil, floor,
// round (half away from zero, as Erlang), exp, log, log10, log2, sqrt, fmod, power. A result
// that is not a finite number (sqrt(-1), log(0), fmod(1, 0)) is the family's `badarith` error.

import { RuleEvalError } from "../errors.ts";
import { short } from "../values.ts";
import { argNum } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

function finite(name: string, args: unknown[], r: number): number {
  if (!Number.isFinite(r)) throw new RuleEvalError(`badarith: ${name}(${args.map(short).join(", ")})`);
  return r + 0; // no -0
}

function unary(name: string, f: (x: number) => number) {
  return fn(1, (args) => finite(name, args, f(argNum(name, args, 0))));
}

function binary(name: string, f: (x: number, y: number) => number) {
  return fn(2, (args) => finite(name, args, f(argNum(name, args, 0), argNum(name, args, 1))));
}

export const mathFunctions: FnTable = {
  abs: unary("abs", Math.abs),
  acos: unary("acos", Math.acos),
  acosh: unary("acosh", Math.acosh),
  asin: unary("asin", Math.asin),
  asinh: unary("asinh", Math.asinh),
  atan: unary("atan", Math.atan),
  atanh: unary("atanh", Math.atanh),
  ceil: unary("ceil", Math.ceil),
  cos: unary("cos", Math.cos),
  cosh: unary("cosh", Math.cosh),
  exp: unary("exp", Math.exp),
  floor: unary("floor", Math.floor),
  log: unary("log", Math.log),
  log10: unary("log10", Math.log10),
  log2: unary("log2", Math.log2),
  round: unary("round", (x) => Math.sign(x) * Math.round(Math.abs(x))),
  sin: unary("sin", Math.sin),
  sinh: unary("sinh", Math.sinh),
  sqrt: unary("sqrt", Math.sqrt),
  tan: unary("tan", Math.tan),
  tanh: unary("tanh", Math.tanh),
  fmod: binary("fmod", (x, y) => x % y),
  power: binary("power", Math.pow),
};
