// Rule SQL lexer and parser: the tree of both dialects' statements (shown as S-expressions),
// and malformed statements with the exact error position.
import { describe, expect, it } from "vitest";
import type { Expr, Field, PathSeg, Statement } from "../../src/rules/sql/ast.ts";
import { SqlError } from "../../src/rules/sql/errors.ts";
import { tokenize } from "../../src/rules/sql/lexer.ts";
import { parseSql } from "../../src/rules/sql/parser.ts";

function seg(s: PathSeg): string {
  if (s.kind === "key") return `.${s.key}`;
  if (s.kind === "index") return `[${String(s.index)}]`;
  return `[${show(s.expr)}]`;
}

function show(e: Expr): string {
  switch (e.kind) {
    case "const":
      return typeof e.value === "string" ? `'${e.value}'` : String(e.value);
    case "var":
      return e.name;
    case "path":
      return `${show(e.base)}${e.segs.map(seg).join("")}`;
    case "slice":
      return `(slice ${show(e.base)} ${e.from} ${e.to})`;
    case "range":
      return `(range ${e.from} ${e.to})`;
    case "list":
      return `(list${e.items.map((i) => ` ${show(i)}`).join("")})`;
    case "call":
      return `(${e.name}${e.args.map((a) => ` ${show(a)}`).join("")})`;
    case "neg":
    case "plus":
    case "not":
      return `(${e.kind} ${show(e.operand)})`;
    case "arith":
    case "compare":
      return `(${e.op} ${show(e.left)} ${show(e.right)})`;
    case "and":
    case "or":
      return `(${e.kind} ${show(e.left)} ${show(e.right)})`;
    case "in":
      return `(${e.negated ? "not-in" : "in"} ${show(e.value)}${e.list.map((i) => ` ${show(i)}`).join("")})`;
    case "case":
      return `(case${e.subject ? ` ${show(e.subject)}` : ""}${e.whens.map((w) => ` (when ${show(w.when)} ${show(w.result)})`).join("")}${e.otherwise ? ` (else ${show(e.otherwise)})` : ""})`;
  }
}

function showField(f: Field): string {
  if (f.kind === "all") return "*";
  if (f.alias === null) return show(f.expr);
  return `${show(f.expr)} as ${f.alias.name}${f.alias.segs.map(seg).join("")}`;
}

function expr(src: string): string {
  const st = parseSql(`SELECT ${src} FROM "t"`);
  expect(st.fields).toHaveLength(1);
  return showField(st.fields[0]);
}

function cond(src: string): string {
  const st = parseSql(`SELECT * FROM "t" WHERE ${src}`);
  return show(st.where!);
}

describe("lexer", () => {
  it("tokenizes keywords case-insensitively, names, strings, numbers and operators", () => {
    const toks = tokenize(`sElEcT a_1, "x y", 'it''s', 12, 1.5e3, 2e2 FrOm "t/#" -- comment\nwhere a<>b`);
    expect(toks.map((t) => `${t.kind}:${t.text}`)).toEqual([
      "keyword:SELECT",
      "name:a_1",
      "op:,",
      "name:x y",
      "op:,",
      "string:it's",
      "op:,",
      "number:12",
      "op:,",
      "number:1.5e3",
      "op:,",
      "number:2e2",
      "keyword:FROM",
      "name:t/#",
      "keyword:WHERE",
      "name:a",
      "op:<>",
      "name:b",
      "eof:",
    ]);
    expect(toks.find((t) => t.text === "1.5e3")!.value).toBe(1500);
    expect(toks.find((t) => t.text === "WHERE")!.line).toBe(2);
  });

  it("reads a range token and positions", () => {
    const toks = tokenize("a[1..-2]\n  [ -1 .. 3 ]");
    expect(toks[1]).toMatchObject({ kind: "range", value: 1, to: -2, line: 1, column: 2 });
    expect(toks[2]).toMatchObject({ kind: "range", value: -1, to: 3, line: 2, column: 3 });
  });

  it("reads digits after a dot as a path key, names with $ @ ~", () => {
    const toks = tokenize("a.1.b x$@~y");
    expect(toks.map((t) => t.text)).toEqual(["a", ".", "1", ".", "b", "x$@~y", ""]);
  });

  it("keeps doubled quotes inside quoted names", () => {
    expect(tokenize(`"a""b"`)[0].text).toBe('a"b');
  });
});

describe("parser: expressions", () => {
  const cases: [string, string][] = [
    ["a", "a"],
    ['"a b"', "a b"],
    ["'str'", "'str'"],
    ["12", "12"],
    ["1.25", "1.25"],
    ["1.5e3", "1500"],
    ["true", "true"],
    ["FALSE", "false"],
    ["-1", "(neg 1)"],
    ["+a", "(plus a)"],
    ["- - a", "(neg (neg a))"],
    ["payload.x.y", "payload.x.y"],
    ["payload.'1'.\"a b\"", "payload.1.a b"],
    ["a.1", "a.1"],
    ["a[1]", "a[1]"],
    ["a[-1]", "a[-1]"],
    ["a[+2]", "a[2]"],
    ["a[0]", "a[head]"],
    ["a[-0]", "a[tail]"],
    ["a[idx]", "a[idx]"],
    ["a[payload.i]", "a[payload.i]"],
    ["a.b[2].c", "a.b[2].c"],
    ["a[1][2]", "a[1][2]"],
    ["a[1..3]", "(slice a 1 3)"],
    ["a.b[-2..-1]", "(slice a.b -2 -1)"],
    ["[1..5]", "(range 1 5)"],
    ["[-2..2]", "(range -2 2)"],
    ["[a, 'x', 1]", "(list a 'x' 1)"],
    ["[]", "(list)"],
    ["f()", "(f)"],
    ["lower(a)", "(lower a)"],
    ["concat(a, 'b')", "(concat a 'b')"],
    ['"+"(1, 2)', "(+ 1 2)"],
    ["f(g(h(1)))", "(f (g (h 1)))"],
    ["json_decode(payload).x", "(json_decode payload).x"],
    ["1 + 2 * 3", "(+ 1 (* 2 3))"],
    ["(1 + 2) * 3", "(* (+ 1 2) 3)"],
    ["1 - 2 - 3", "(- (- 1 2) 3)"],
    ["8 / 2 / 2", "(/ (/ 8 2) 2)"],
    ["7 div 2", "(div 7 2)"],
    ["7 DIV 2 * 3", "(* (div 7 2) 3)"],
    ["-a * b", "(* (neg a) b)"],
    ["a = 1", "(= a 1)"],
    ["a != 1", "(!= a 1)"],
    ["a <> 1", "(<> a 1)"],
    ["a < 1", "(< a 1)"],
    ["a > 1", "(> a 1)"],
    ["a <= 1", "(<= a 1)"],
    ["a >= 1", "(>= a 1)"],
    ["topic =~ 't/#'", "(=~ topic 't/#')"],
    ["a ~= b", "(~= a b)"],
    ["a + 1 = b * 2", "(= (+ a 1) (* b 2))"],
    ["CASE WHEN a THEN 1 END", "(case (when a 1))"],
    ["CASE WHEN a > 1 THEN 'x' WHEN b THEN 'y' ELSE 'z' END", "(case (when (> a 1) 'x') (when b 'y') (else 'z'))"],
    ["case a when 1 then 'one' else 'other' end", "(case a (when 1 'one') (else 'other'))"],
    ["CASE WHEN a AND NOT b THEN 1 END", "(case (when (and a (not b)) 1))"],
  ];
  it.each(cases)("%s", (src, want) => {
    expect(expr(src)).toBe(want);
  });
});

describe("parser: conditions", () => {
  const cases: [string, string][] = [
    ["a = 1 and b = 2", "(and (= a 1) (= b 2))"],
    ["a = 1 or b = 2 and c = 3", "(or (= a 1) (and (= b 2) (= c 3)))"],
    ["(a = 1 or b = 2) and c = 3", "(and (or (= a 1) (= b 2)) (= c 3))"],
    ["not a = 1", "(not (= a 1))"],
    ["NOT NOT a", "(not (not a))"],
    ["not a and b", "(and (not a) b)"],
    ["a in (1, 2, 'x')", "(in a 1 2 'x')"],
    ["a not in (1)", "(not-in a 1)"],
    ["NOT a IN (1, 2)", "(not (in a 1 2))"],
    ["payload.x in (payload.y, 3 + 1)", "(in payload.x payload.y (+ 3 1))"],
    ["is_null(a)", "(is_null a)"],
    ["a =~ 't/+/x' OR b", "(or (=~ a 't/+/x') b)"],
    ["a AnD b Or c", "(or (and a b) c)"],
  ];
  it.each(cases)("%s", (src, want) => {
    expect(cond(src)).toBe(want);
  });
});

describe("parser: fields and aliases", () => {
  const cases: [string, string[]][] = [
    [`SELECT * FROM "t"`, ["*"]],
    [`SELECT *, a FROM "t"`, ["*", "a"]],
    [`SELECT a AS b FROM "t"`, ["a as b"]],
    [`SELECT a b FROM "t"`, ["a as b"]],
    [`SELECT a as "b c" FROM "t"`, ["a as b c"]],
    [`SELECT 1 AS x.y FROM "t"`, ["1 as x.y"]],
    [`SELECT 1 AS l[0], 2 AS l[-0], 3 AS l[2] FROM "t"`, ["1 as l[head]", "2 as l[tail]", "3 as l[2]"]],
    [`SELECT payload.a.b AS ab, qos FROM "t"`, ["payload.a.b as ab", "qos"]],
    [`SELECT CASE WHEN a THEN 1 END c FROM "t"`, ["(case (when a 1)) as c"]],
    [`SELECT a * 2 as dbl, a - 1 less FROM "t"`, ["(* a 2) as dbl", "(- a 1) as less"]],
  ];
  it.each(cases)("%s", (sql, want) => {
    expect(parseSql(sql).fields.map(showField)).toEqual(want);
  });
});

describe("parser: statements of both dialects", () => {
  it("3.x: event name in FROM, =~ in WHERE", () => {
    const st = parseSql(`SELECT client_id, payload FROM "message.publish" WHERE topic =~ 't/#' and qos = 1`);
    expect(st.kind).toBe("select");
    expect(st.from.map((s) => s.name)).toEqual(["message.publish"]);
    expect(show(st.where!)).toBe("(and (=~ topic 't/#') (= qos 1))");
  });

  it("3.x aliases and several events", () => {
    const st = parseSql(`SELECT * FROM "$message", "client.connected"`);
    expect(st.from.map((s) => s.name)).toEqual(["$message", "client.connected"]);
  });

  it("4.x: topic filters and $events sources", () => {
    const st = parseSql(`SELECT * FROM "t/#", "a/+/b", "$events/client_connected"`);
    expect(st.from.map((s) => s.name)).toEqual(["t/#", "a/+/b", "$events/client_connected"]);
    expect(st.from[2].pos).toEqual({ line: 1, column: 31 });
  });

  it("FOREACH with DO, INCASE and WHERE", () => {
    const st: Statement = parseSql(
      `FOREACH payload.sensors as s DO s.id as id, s.v INCASE s.v > 10 FROM "t/#" WHERE qos > 0`,
    );
    expect(st.kind).toBe("foreach");
    expect(st.fields.map(showField)).toEqual(["payload.sensors as s"]);
    expect(st.doFields!.map(showField)).toEqual(["s.id as id", "s.v"]);
    expect(show(st.incase!)).toBe("(> s.v 10)");
    expect(show(st.where!)).toBe("(> qos 0)");
  });

  it("FOREACH alone, with INCASE only, with DO only", () => {
    expect(parseSql(`FOREACH payload.l FROM "t"`).doFields).toBeNull();
    const a = parseSql(`FOREACH clientid, payload.l INCASE item > 1 FROM "t"`);
    expect(a.fields).toHaveLength(2);
    expect(a.doFields).toBeNull();
    expect(show(a.incase!)).toBe("(> item 1)");
    const b = parseSql(`foreach payload.l do item + 1 as x from "t"`);
    expect(b.doFields!.map(showField)).toEqual(["(+ item 1) as x"]);
    expect(b.incase).toBeNull();
  });

  it("comments, newlines and case-insensitive keywords", () => {
    const st = parseSql(`-- leading comment\nselect\n  a, -- first\n  b\nfrom "t" -- trailing\nwhere a = 1 -- end`);
    expect(st.fields.map(showField)).toEqual(["a", "b"]);
    expect(show(st.where!)).toBe("(= a 1)");
  });

  it("a bare FROM name and a quoted name with spaces", () => {
    expect(parseSql(`SELECT a FROM t`).from[0].name).toBe("t");
    expect(parseSql(`SELECT a FROM "a b/c"`).from[0].name).toBe("a b/c");
  });
});

describe("parser: malformed SQL with the error position", () => {
  const cases: [string, string][] = [
    ["", "line 1, column 1: empty SQL statement"],
    ["   \n ", "line 1, column 1: empty SQL statement"],
    [`UPDATE t`, "line 1, column 1: expected SELECT or FOREACH"],
    [`SELECT a, b, c   WHERE x`, "line 1, column 18: expected FROM"],
    [`SELECT FROM "t"`, "line 1, column 8: expected an expression"],
    [`SELECT a FROM`, "line 1, column 14: expected a topic or event name in double quotes"],
    [`SELECT a FROM 't/#'`, "line 1, column 15: expected a topic or event name in double quotes"],
    [`SELECT a FROM "t",`, "line 1, column 19: expected a topic or event name in double quotes"],
    [`SELECT a FROM "t" x`, "line 1, column 19: expected WHERE or end of statement"],
    [`SELECT a FROM "t" WHERE`, "line 1, column 24: expected an expression"],
    [`SELECT a FROM "t" WHERE a = 1 b`, "line 1, column 31: unexpected 'b'"],
    [`SELECT a FROM "t" WHERE a = 1 AND`, "line 1, column 34: expected an expression"],
    [`SELECT a FROM "t" WHERE (a = 1`, "line 1, column 31: expected ')'"],
    [`SELECT a FROM "t" WHERE a = b = c`, "line 1, column 31: comparison operators cannot be chained"],
    [`SELECT a FROM "t" WHERE a IN 1`, "line 1, column 30: expected '(' after IN"],
    [`SELECT a FROM "t" WHERE a IN (1, 2`, "line 1, column 35: expected ')'"],
    [`SELECT 'abc FROM "t"`, "line 1, column 8: unterminated string"],
    [`SELECT "abc FROM t`, "line 1, column 8: unterminated quoted name"],
    [`SELECT a # b FROM "t"`, "line 1, column 10: unexpected character '#'"],
    [`SELECT a; FROM "t"`, "line 1, column 9: unexpected character ';'"],
    [`SELECT a AS FROM "t"`, "line 1, column 13: expected an alias after AS"],
    [`SELECT a AS 'x' FROM "t"`, "line 1, column 13: expected an alias after AS"],
    [`SELECT a. FROM "t"`, "line 1, column 11: expected a name after '.'"],
    [`SELECT a[] FROM "t"`, "line 1, column 10: expected an index"],
    [`SELECT a[1 FROM "t"`, "line 1, column 12: expected ']'"],
    [`SELECT f(1, FROM "t"`, "line 1, column 13: expected an expression"],
    [`SELECT f(1 2) FROM "t"`, "line 1, column 12: expected ')'"],
    [`SELECT [1, 2 FROM "t"`, "line 1, column 14: expected ']'"],
    [`SELECT CASE END FROM "t"`, "line 1, column 13: expected WHEN"],
    [`SELECT CASE WHEN a 1 END FROM "t"`, "line 1, column 20: expected THEN"],
    [`SELECT CASE WHEN a THEN 1 FROM "t"`, "line 1, column 27: expected END"],
    [`SELECT 1 AS x[1..2] FROM "t"`, "line 1, column 14: a range cannot be an alias"],
    [`SELECT 12abc FROM "t"`, "line 1, column 8: invalid number '12a'"],
    [`SELECT a FROM "t"\nWHERE a = = 1`, "line 2, column 11: expected an expression"],
    ['SELECT a,\n  b,\n  FROM "t"', "line 3, column 3: expected an expression"],
    [`FOREACH payload.l WHERE x FROM "t"`, "line 1, column 19: expected DO, INCASE or FROM"],
    [`FOREACH payload.l DO a WHERE x`, "line 1, column 24: expected FROM"],
    [`SELECT a FROM ""`, "line 1, column 15: empty quoted name"],
    [`SELECT IF FROM "t"`, "line 1, column 8: expected an expression"],
    [`SELECT a FROM "t" WHERE NOT`, "line 1, column 28: expected an expression"],
  ];
  it.each(cases)("%j", (sql, message) => {
    let error: unknown;
    try {
      parseSql(sql);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SqlError);
    expect((error as SqlError).message).toBe(message);
    const m = /^line (\d+), column (\d+): (.*)$/.exec(message)!;
    expect((error as SqlError).line).toBe(Number(m[1]));
    expect((error as SqlError).column).toBe(Number(m[2]));
    expect((error as SqlError).reason).toBe(m[3]);
  });
});
