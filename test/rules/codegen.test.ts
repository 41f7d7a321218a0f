// The generated evaluation of the common SELECT form (runtime/codegen.ts): the same answers as
// the closures for the cases where they could differ (names Object.prototype has, aliases read by
// later fields and WHERE, a `*` after fields, CASE and dynamic paths left to closures), SQL text
// never becoming code, `SELECT *` answering the event's columns unmodified, and rules of one
// event sharing the decoded payload through a shared root frame.
import { describe, expect, it } from "vitest";
import { compileRule } from "../../src/rules/runtime/compile.ts";
import { RuleEvalError } from "../../src/rules/runtime/errors.ts";
import { Frame } from "../../src/rules/runtime/scope.ts";

const ctx = () => ({
  clientid: "c1",
  topic: "t/1",
  qos: 1,
  payload: '{"a":{"b":2},"list":[1,2,3],"k":"b"}',
});

const rows = (sql: string, c: Record<string, unknown> = ctx()) => compileRule(sql).evaluate(c);

describe("generated SELECT evaluation", () => {
  it("reads names Object.prototype has as own columns only", () => {
    expect(rows('SELECT toString, constructor FROM "t/#"')).toEqual([{ toString: undefined, constructor: undefined }]);
    expect(rows('SELECT toString FROM "t/#"', { ...ctx(), toString: "col" })).toEqual([{ toString: "col" }]);
  });

  it("lets later fields and WHERE read earlier aliases, which shadow columns", () => {
    expect(rows('SELECT qos + 1 as q, q * 2 as r FROM "t/#" WHERE r = 4')).toEqual([{ q: 2, r: 4 }]);
    expect(rows('SELECT qos + 1 as q, q * 2 as r FROM "t/#" WHERE r = 5')).toBeNull();
    expect(rows("SELECT 'x' as clientid, clientid as c FROM \"t/#\" WHERE clientid = 'x'")).toEqual([
      { clientid: "x", c: "x" },
    ]);
  });

  it("builds a row whose name is given twice with the first place and the last value", () => {
    const out = rows('SELECT qos as a, topic as b, qos + 1 as a FROM "t/#" WHERE a = 2');
    expect(out).toEqual([{ a: 2, b: "t/1" }]);
    expect(Object.keys(out?.[0] ?? {})).toEqual(["a", "b"]);
    expect(rows('SELECT qos as a, qos + 1 as a FROM "t/#" WHERE a = 1')).toBeNull();
  });

  it("keeps a field named __proto__ an own column, never the row's prototype", () => {
    const out = rows('SELECT topic as "__proto__", qos FROM "t/#"')?.[0] as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, "__proto__")).toBe(true);
    expect(Object.getOwnPropertyDescriptor(out, "__proto__")?.value).toBe("t/1");
    expect(out.qos).toBe(1);
  });

  it("adds the columns a row lacks for a `*` after fields", () => {
    expect(rows('SELECT 5 as qos, * FROM "t/#"')).toEqual([{ ...ctx(), qos: 5 }]);
    expect(rows('SELECT *, 5 as qos FROM "t/#"')).toEqual([{ ...ctx(), qos: 5 }]);
  });

  it("evaluates CASE, dynamic paths and payload paths", () => {
    const sql =
      "SELECT CASE WHEN qos = 1 THEN 'one' ELSE 'other' END as c, payload.list[qos + 1] as d, payload.a.b as e, " +
      'payload.list[1] as f FROM "t/#"';
    expect(rows(sql)).toEqual([{ c: "one", d: 2, e: 2, f: 1 }]);
  });

  it("keeps every SQL text a value: string constants and names never become code", () => {
    const evil = "'); throw new Error(\"injected\"); ('";
    expect(
      rows(`SELECT '${evil.replaceAll("'", "''")}' as x FROM "t/#" WHERE topic != '${evil.replaceAll("'", "''")}'`),
    ).toEqual([{ x: evil }]);
    expect(rows('SELECT qos as "a]; throw 1; //" FROM "t/#"')).toEqual([{ "a]; throw 1; //": 1 }]);
  });

  it("answers the event's columns for SELECT * without copying or changing them", () => {
    const c = ctx();
    const frozen = Object.freeze({ ...c });
    const out = rows('SELECT * FROM "t/#" WHERE qos = 1', frozen);
    expect(out).toEqual([c]);
    expect(out?.[0]).toBe(frozen);
  });

  it("wraps failures as RuleEvalError", () => {
    expect(() => rows('SELECT payload.x as x FROM "t/#"', { payload: "not json" })).toThrow(RuleEvalError);
  });

  it("shares one decoded payload between the rules of an event", () => {
    const root = new Frame(ctx(), null);
    const a = compileRule('SELECT payload.a as a FROM "t/#"').evaluateIn(root);
    root.dict = null;
    const b = compileRule('SELECT payload.a as x, qos FROM "t/#"').evaluateIn(root);
    expect(a?.[0].a).toEqual({ b: 2 });
    expect(b?.[0].x).toBe(a?.[0].a);
  });

  it("keeps proc_dict per evaluation", () => {
    const put = compileRule("SELECT proc_dict_put('k', 1) as p, proc_dict_get('k') as g FROM \"t/#\"");
    const get = compileRule("SELECT proc_dict_get('k') as g FROM \"t/#\"");
    const root = new Frame(ctx(), null);
    expect(put.evaluateIn(root)?.[0].g).toBe(1);
    root.dict = null;
    expect(get.evaluateIn(root)?.[0].g).toBeUndefined();
  });

  it("answers comparisons with a constant as compare() does, for every operand type", () => {
    // A CASE condition is evaluated by compile.ts's closures, the bare field by generated code.
    const values = ["1", "t/1", 1, 0, 2.5, true, null, Buffer.from("t/1"), Buffer.from("1")];
    const conds = [
      "x = 1",
      "x != 1",
      "x <> 1",
      "x < 1",
      "x > 1",
      "x <= 1",
      "x >= 1",
      "x = 2.5",
      "x < 0",
      "x = 't/1'",
      "x != 't/1'",
      "x =~ 't/+'",
      "x =~ '#'",
      "x =~ 'u/+'",
    ];
    for (const x of values) {
      for (const cond of conds) {
        const c = { x };
        const run = (sql: string) => {
          try {
            return compileRule(sql).evaluate(c)?.[0].v;
          } catch (err) {
            return (err as Error).message;
          }
        };
        const generated = run(`SELECT ${cond} as v FROM "t/#"`);
        const closure = run(`SELECT CASE WHEN ${cond} THEN true ELSE false END as v FROM "t/#"`);
        expect({ x, cond, v: generated }).toEqual({ x, cond, v: closure });
      }
    }
  });

  it("gives functions that read their environment the aliases, and the others their arguments", () => {
    expect(rows('SELECT upper(topic) as t, lower(t) as l FROM "t/#"')).toEqual([{ t: "T/1", l: "t/1" }]);
    expect(rows("SELECT 'x' as topic, topic() as t FROM \"t/#\"")).toEqual([{ topic: "x", t: "x" }]);
  });
});
