// Shared fixtures of the rule SQL tests: an event context and shorthands that compile a
// statement (or one expression as `SELECT <expr> AS r`) and evaluate it.

import { compileRule } from "../../src/rules/runtime/compile.ts";
import { RuleEvalError } from "../../src/rules/runtime/errors.ts";
import { SqlError } from "../../src/rules/sql/errors.ts";

export const PAYLOAD = {
  msg: "hello",
  n: 5,
  f: 1.5,
  s: "12",
  neg: -3,
  list: [1, 2, 3],
  strs: ["a", "b"],
  nested: { a: { b: "deep" }, arr: [{ k: "x" }, { k: "y" }] },
  sensors: [
    { id: 1, v: 10 },
    { id: 2, v: 20 },
    { id: 3, v: 30 },
  ],
  nul: null,
  bool: true,
  idx: 2,
  json: '{"inner":{"z":26}}',
  "a b": "spaced",
  "1": "one",
};

export const CTX: Record<string, unknown> = {
  event: "message.publish",
  id: "0005F8F8A7B5E8D2F4420100000E0001",
  clientid: "c1",
  client_id: "c1",
  username: "u1",
  topic: "t/a/b",
  qos: 1,
  payload: JSON.stringify(PAYLOAD),
  peerhost: "10.0.0.1",
  peername: "10.0.0.1:5000",
  flags: { retain: true, dup: false },
  headers: { proto_ver: 5 },
  timestamp: 1700000000000,
  node: "svc@127.0.0.1",
  num_s: "42",
  float_s: "2.5",
  word: "abc",
  t: true,
  zero: 0,
  list: [3, 1, 2],
  map: { k: "v", n: 1 },
  nullish: null,
  topic_filters: [
    { topic: "t/1", qos: 0 },
    { topic: "t/2/+", qos: 1 },
    { topic: "a/#", qos: 2 },
  ],
};

/** The rows of a statement evaluated against ctx. */
export function run(sql: string, ctx: Record<string, unknown> = CTX): Record<string, unknown>[] | null {
  return compileRule(sql).evaluate(ctx);
}

/** The value of one expression (`SELECT <expr> AS r FROM "t/#"`). */
export function value(expr: string, ctx: Record<string, unknown> = CTX): unknown {
  const rows = run(`SELECT ${expr} AS r FROM "t/#"`, ctx);
  if (rows === null) throw new Error("no row");
  return rows[0].r;
}

/** True when `cond` passes as a WHERE condition. */
export function where(cond: string, ctx: Record<string, unknown> = CTX): boolean {
  return run(`SELECT 1 AS x FROM "t/#" WHERE ${cond}`, ctx) !== null;
}

/** The reason of the RuleEvalError an expression throws. */
export function evalError(expr: string, ctx: Record<string, unknown> = CTX): string {
  try {
    value(expr, ctx);
  } catch (e) {
    if (e instanceof RuleEvalError) return e.reason;
    throw e;
  }
  throw new Error(`no error from ${expr}`);
}

/** The message of the SqlError a statement throws when compiled. */
export function sqlError(sql: string): string {
  try {
    compileRule(sql);
  } catch (e) {
    if (e instanceof SqlError) return e.message;
    throw e;
  }
  throw new Error(`no SqlError from ${sql}`);
}
