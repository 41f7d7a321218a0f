// Rule SQL evaluation: operators, coercions, paths and slices, aliases, SELECT *, CASE,
// FOREACH/DO/INCASE, FROM of both dialects, rule exceptions, and that compiled rules never
// parse again.
import { describe, expect, it } from "vitest";
import { compileRule } from "../../src/rules/runtime/compile.ts";
import { RuleEvalError } from "../../src/rules/runtime/errors.ts";
import { parseCount } from "../../src/rules/sql/parser.ts";
import { CTX, evalError, PAYLOAD, run, sqlError, value, where } from "./helpers.ts";

describe("arithmetic", () => {
  const cases: [string, unknown][] = [
    ["1 + 2", 3],
    ["1.5 + 1", 2.5],
    ["10 - 4", 6],
    ["-3 - -3", 0],
    ["3 * 4", 12],
    ["2.5 * 2", 5],
    ["7 / 2", 3.5],
    ["-7 / 2", -3.5],
    ["7 div 2", 3],
    ["-7 div 2", -3],
    ["7 div -2", -3],
    ["1 + 2 * 3 - 4 / 2", 5],
    ["(1 + 2) * 3", 9],
    ["2 * (3 + 4) div 3", 4],
    ["-(2 + 3)", -5],
    ["+5", 5],
    ["- qos", -1],
    ["'ab' + 'cd'", "abcd"],
    ["clientid + '-' + username", "c1-u1"],
    ["payload.n * 2", 10],
    ["payload.f + payload.n", 6.5],
    ["payload.list[2] + payload.list[3]", 5],
    ["qos + 1", 2],
    ["mod(7, 3)", 1],
    ["mod(-7, 3)", -1],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  const errors: [string, string][] = [
    ["1 + 'a'", "unsupported_type_implicit_conversion"],
    ["'a' + 1", "unsupported_type_implicit_conversion"],
    ["1 + true", "unsupported_function_operator_type: 1 + true"],
    ["'a' - 'b'", "unsupported_function_operator_type: 'a' - 'b'"],
    ["'a' * 2", "unsupported_function_operator_type: 'a' * 2"],
    ["1 / 0", "badarith: division by zero"],
    ["1 / 'x'", "unsupported_function_operator_type: 1 / 'x'"],
    ["5 div 0", "badarith: division by zero"],
    ["5.5 div 2", "unsupported_function_operator_type: 5.5 div 2"],
    ["nullish + 1", "unsupported_function_operator_type: undefined + 1"],
    ["-word", "badarith: -'abc'"],
    ["mod(1, 0)", "badarith: division by zero"],
  ];
  it.each(errors)("%s is a rule exception", (e, reason) => {
    expect(evalError(e)).toBe(reason);
  });
});

describe("comparison and coercion", () => {
  const cases: [string, boolean][] = [
    ["qos = 1", true],
    ["qos = 2", false],
    ["qos != 2", true],
    ["qos <> 1", false],
    ["qos < 2", true],
    ["qos > 0", true],
    ["qos <= 1", true],
    ["qos >= 2", false],
    ["clientid = 'c1'", true],
    ["clientid = 'C1'", false],
    ["clientid != 'x'", true],
    ["'abc' < 'abd'", true],
    ["'b' > 'abc'", true],
    // number vs string: the string is parsed
    ["num_s = 42", true],
    ["42 = num_s", true],
    ["num_s > 41", true],
    ["float_s = 2.5", true],
    ["float_s < 3", true],
    ["payload.s = 12", true],
    ["qos = '1'", true],
    ["'1.0' = 1", true],
    // string vs string: no parsing
    ["num_s = '42.0'", false],
    // booleans vs strings compare their names
    ["t = 'true'", true],
    ["payload.bool = 'true'", true],
    ["t = true", true],
    ["t != false", true],
    // null
    ["nullish = nullish", true],
    ["missing = nullish", true],
    ["missing = 1", false],
    ["1 = missing", false],
    ["missing != 1", true],
    ["missing <> missing", false],
    ["missing < 1", false],
    ["missing > 1", false],
    ["1 < missing", false],
    ["missing <= missing", true],
    ["missing >= 1", false],
    ["payload.nul = missing", true],
    // structures
    ["payload.list = [1, 2, 3]", true],
    ["payload.list = [1, 2]", false],
    ["map = map", true],
    ["payload.nested.a = payload.nested.a", true],
    // term order across types: number < atom < map < list < binary
    ["true > 1", true],
    ["[1] < 'a'", true],
    // topics
    ["topic =~ 't/#'", true],
    ["topic =~ 't/+/b'", true],
    ["topic =~ 't/+'", false],
    ["topic =~ '#'", true],
    ["topic =~ 't/a/b'", true],
    ["'$SYS/x' =~ '#'", false],
    ["'$SYS/x' =~ '$SYS/#'", true],
    ["missing =~ 't/#'", false],
    ["missing =~ missing", true],
    ["t =~ 't/#'", false],
  ];
  it.each(cases)("%s", (c, want) => {
    expect(where(c)).toBe(want);
  });

  it("comparisons are values in SELECT", () => {
    expect(value("qos = 1")).toBe(true);
    expect(value("qos > 5")).toBe(false);
  });

  it("number vs unparseable string is a rule exception", () => {
    expect(evalError("qos = 'abc'")).toBe("bad_number: 'abc'");
    expect(evalError("word > 1")).toBe("bad_number: 'abc'");
    expect(evalError("1 < 'a'")).toBe("bad_number: 'a'");
    expect(evalError("qos =~ 't/#'")).toBe("bad_number: 't/#'");
  });

  it("~= is lexed but never evaluated", () => {
    expect(evalError("qos ~= 1")).toBe("unsupported_operator: ~=");
  });
});

describe("and, or, not, in", () => {
  const cases: [string, boolean][] = [
    ["qos = 1 and clientid = 'c1'", true],
    ["qos = 1 and clientid = 'x'", false],
    ["qos = 2 or clientid = 'c1'", true],
    ["qos = 2 or clientid = 'x'", false],
    ["not qos = 2", true],
    ["not qos = 1", false],
    ["not (qos = 1 and t)", false],
    ["not t", false],
    ["not payload.bool", false],
    ["not not t", true],
    ["not word", false],
    ["not missing", false],
    ["t", true],
    ["word", false],
    ["payload.n", false],
    ["t and word", false],
    ["word or t", true],
    ["qos in (0, 1)", true],
    ["qos in (2)", false],
    ["qos not in (0, 2)", true],
    ["qos not in (1, 2)", false],
    ["clientid in ('a', 'c1')", true],
    ["qos in ('1')", false],
    ["missing in (1, missing)", true],
    ["payload.list in ([1,2,3], [4])", true],
    ["payload.n in (payload.list[1] + 4, 0)", true],
    ["qos = 1 and (topic =~ 'x/#' or topic =~ 't/#')", true],
    ["qos = 1 or 1 / 0 = 1", true],
  ];
  it.each(cases)("%s", (c, want) => {
    expect(where(c)).toBe(want);
  });

  it("and/or short-circuit", () => {
    expect(where("qos = 2 and 1 / 0 = 1")).toBe(false);
  });
});

describe("CASE", () => {
  const cases: [string, unknown][] = [
    ["CASE WHEN qos = 1 THEN 'one' ELSE 'other' END", "one"],
    ["CASE WHEN qos = 2 THEN 'two' ELSE 'other' END", "other"],
    ["CASE WHEN qos = 2 THEN 'two' END", undefined],
    ["CASE WHEN qos = 0 THEN 0 WHEN qos = 1 THEN 10 WHEN qos = 1 THEN 20 END", 10],
    ["CASE qos WHEN 0 THEN 'zero' WHEN 1 THEN 'uno' END", "uno"],
    ["CASE qos WHEN 5 THEN 'five' ELSE 'else' END", "else"],
    ["CASE clientid WHEN 'c1' THEN upper(clientid) END", "C1"],
    ["CASE payload.msg WHEN 'hello' THEN payload.n * 2 END", 10],
    ["CASE WHEN word THEN 1 ELSE 2 END", 2],
    ["CASE WHEN is_null(missing) THEN 'null' END", "null"],
    ["CASE WHEN qos > 0 AND t THEN CASE WHEN qos = 1 THEN 'nested' END END", "nested"],
    ["CASE qos WHEN '1' THEN 'string' ELSE 'exact' END", "exact"],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("an unaliased CASE gets a hidden key", () => {
    expect(run(`SELECT CASE WHEN true THEN 1 END FROM "t"`)).toEqual([{ _v_case_1: 1 }]);
  });
});

describe("paths, indexes and slices", () => {
  const cases: [string, unknown][] = [
    ["payload.msg", "hello"],
    ["payload.nested.a.b", "deep"],
    ["payload.nested.arr[2].k", "y"],
    ["payload.nested.arr[-1].k", "y"],
    ["payload.list[1]", 1],
    ["payload.list[3]", 3],
    ["payload.list[-1]", 3],
    ["payload.list[-3]", 1],
    ["payload.list[4]", undefined],
    ["payload.list[-4]", undefined],
    ["payload.list[0]", undefined],
    ["payload.list[payload.idx]", 2],
    ["payload.list[qos]", 1],
    ["payload.list[word]", undefined],
    ["payload.list[1..2]", [1, 2]],
    ["payload.list[2..-1]", [2, 3]],
    ["payload.list[-2..-1]", [2, 3]],
    ["payload.list[1..10]", [1, 2, 3]],
    ["payload.list[3..1]", []],
    ["payload.sensors[2..3][1].v", 20],
    ["[1..5]", [1, 2, 3, 4, 5]],
    ["[-1..1]", [-1, 0, 1]],
    ["[3..1]", []],
    ["[1, 'x', qos, payload.n]", [1, "x", 1, 5]],
    ["[]", []],
    ["payload.missing", undefined],
    ["payload.missing.deeper", undefined],
    ["payload.msg.x", undefined],
    ["payload.'1'", "one"],
    ["payload.1", "one"],
    ['payload."a b"', "spaced"],
    ["payload.json.inner.z", 26],
    ["map.k", "v"],
    ["map.missing", undefined],
    ["list[1]", 3],
    ["flags.retain", true],
    ["json_decode(payload).n", 5],
    ["(payload.list)[2]", 2],
    ["payload", CTX.payload],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("a column holding JSON text is decoded by a path into it", () => {
    expect(value("j.a[2]", { ...CTX, j: '{"a":[7,8]}' })).toBe(8);
    expect(value("j.a", { ...CTX, j: "not json" })).toBeUndefined();
  });

  it("payload paths need a JSON payload", () => {
    expect(evalError("payload.x", { ...CTX, payload: "not json" })).toMatch(/^decode_json_failed/);
    expect(value("payload", { ...CTX, payload: "not json" })).toBe("not json");
  });

  it("a payload that is already a map or a Buffer works", () => {
    expect(value("payload.a", { ...CTX, payload: { a: 1 } })).toBe(1);
    expect(value("payload.a", { ...CTX, payload: Buffer.from('{"a":2}') })).toBe(2);
    expect(value("payload.a", { ...CTX, payload: undefined })).toBeUndefined();
  });

  it("slicing a non-list is a rule exception", () => {
    expect(evalError("payload.msg[1..2]")).toBe("range_get: non_list_data");
  });

  it("slice index 0 is refused at compile time", () => {
    expect(sqlError(`SELECT a[0..2] FROM "t"`)).toBe("line 1, column 8: slice indexes start at 1 (0 is not an index)");
  });
});

describe("SELECT fields and aliases", () => {
  it("an alias is visible to later fields and to WHERE", () => {
    expect(run(`SELECT payload.n AS n, n * 2 AS dbl FROM "t/#" WHERE dbl = 10`)).toEqual([{ n: 5, dbl: 10 }]);
    expect(run(`SELECT payload.n AS n FROM "t/#" WHERE n > 5`)).toBeNull();
  });

  it("an alias shadows a column for later fields and WHERE", () => {
    expect(run(`SELECT 'x' AS clientid, clientid AS c2 FROM "t" WHERE clientid = 'x'`)).toEqual([
      { clientid: "x", c2: "x" },
    ]);
  });

  it("AS keyword is optional", () => {
    expect(run(`SELECT qos q, clientid "the id" FROM "t"`)).toEqual([{ q: 1, "the id": "c1" }]);
  });

  it("unaliased variables and paths keep their names", () => {
    expect(run(`SELECT clientid, payload.msg, payload.nested.a.b FROM "t"`)).toEqual([
      { clientid: "c1", payload: { msg: "hello", nested: { a: { b: "deep" } } } },
    ]);
  });

  it("an unaliased string literal is its own key; computed values get hidden keys", () => {
    expect(run(`SELECT 'abc', 1, 1 + 1, lower('A'), [1], qos = 1, payload.list[1..2] FROM "t"`)).toEqual([
      {
        abc: "abc",
        _v_const_2: 1,
        _v_op_3: 2,
        _v_fun_lower_4: "a",
        _v_list_5: [1],
        _v_op_6: true,
        payload: { list: [1, 2] },
      },
    ]);
  });

  it("AS path targets build nested maps", () => {
    expect(run(`SELECT 1 AS x.y, 2 AS x.z, 3 AS a.b.c FROM "t"`)).toEqual([{ x: { y: 1, z: 2 }, a: { b: { c: 3 } } }]);
  });

  it("AS path targets write into lists: [0] prepends, [-0] appends, [n] replaces", () => {
    expect(run(`SELECT [1, 2] AS l, 0 AS l[0], 9 AS l[-0], 5 AS l[2] FROM "t"`)).toEqual([{ l: [0, 5, 2, 9] }]);
    expect(run(`SELECT 7 AS l[1] FROM "t"`)).toEqual([{ l: [7] }]);
    expect(run(`SELECT [1, 2] AS l, 7 AS l[5], 8 AS l[-1] FROM "t"`)).toEqual([{ l: [1, 8] }]);
    expect(run(`SELECT [1, 2] AS l, 7 AS l[qos] FROM "t"`)).toEqual([{ l: [7, 2] }]);
  });

  it("an AS path under payload extends the decoded payload for later fields", () => {
    const rows = run(`SELECT 'v' AS payload.added, payload.added AS a, payload.msg AS m FROM "t"`)!;
    expect(rows[0].a).toBe("v");
    expect(rows[0].m).toBe("hello");
    expect(rows[0].payload).toEqual({ added: "v" });
  });

  it("* copies every column, and later fields override", () => {
    const rows = run(`SELECT *, 'x' AS clientid FROM "t"`)!;
    expect(rows[0]).toEqual({ ...CTX, clientid: "x" });
    expect(run(`SELECT 'x' AS clientid, * FROM "t"`)![0].clientid).toBe("x");
    expect(run(`SELECT 'x' AS newcol, * FROM "t"`)![0].newcol).toBe("x");
  });

  it("WHERE sees input columns that were not selected", () => {
    expect(run(`SELECT clientid FROM "t" WHERE username = 'u1' and payload.msg = 'hello'`)).toEqual([
      { clientid: "c1" },
    ]);
  });

  it("the event context is not modified", () => {
    const ctx = structuredClone({ ...CTX, nested: { a: [1, 2] } });
    const before = structuredClone(ctx);
    run(`SELECT 1 AS nested.b, 2 AS nested.a[0], 'x' AS clientid, 3 AS payload.q, * FROM "t"`, ctx);
    expect(ctx).toEqual(before);
  });

  it("a missing column selects as undefined", () => {
    const rows = run(`SELECT missing, payload.nope AS p FROM "t"`)!;
    expect(rows[0]).toHaveProperty("missing", undefined);
    expect(rows[0]).toHaveProperty("p", undefined);
  });

  it("WHERE false, or non-boolean, gives null", () => {
    expect(run(`SELECT * FROM "t" WHERE qos = 5`)).toBeNull();
    expect(run(`SELECT * FROM "t" WHERE clientid`)).toBeNull();
    expect(run(`SELECT * FROM "t" WHERE is_null(missing)`)).not.toBeNull();
  });

  it("every evaluation starts from a clean state", () => {
    const rule = compileRule(`SELECT payload.n AS n FROM "t"`);
    expect(rule.evaluate({ payload: '{"n":1}' })).toEqual([{ n: 1 }]);
    expect(rule.evaluate({ payload: '{"n":2}' })).toEqual([{ n: 2 }]);
    expect(rule.evaluate({})).toEqual([{ n: undefined }]);
  });
});

describe("FOREACH / DO / INCASE", () => {
  it("one row per element, with item bound", () => {
    const rows = run(`FOREACH payload.sensors DO item.id AS id FROM "t/#"`);
    expect(rows).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
  });

  it("an alias names the element", () => {
    expect(run(`FOREACH payload.sensors AS s DO s.v AS v FROM "t/#"`)).toEqual([{ v: 10 }, { v: 20 }, { v: 30 }]);
  });

  it("INCASE filters elements", () => {
    expect(run(`FOREACH payload.sensors AS s DO s.id AS id INCASE s.v >= 20 FROM "t/#"`)).toEqual([
      { id: 2 },
      { id: 3 },
    ]);
    expect(run(`FOREACH payload.sensors AS s INCASE s.v > 100 FROM "t/#"`)).toBeNull();
  });

  it("WHERE runs once before iterating and sees the selected fields", () => {
    expect(run(`FOREACH payload.sensors AS s DO s.id AS id FROM "t/#" WHERE qos = 2`)).toBeNull();
    expect(run(`FOREACH clientid AS c, payload.list AS l DO l FROM "t/#" WHERE c = 'c1' and length(l) = 3`)).toEqual([
      { l: 1 },
      { l: 2 },
      { l: 3 },
    ]);
    expect(run(`FOREACH clientid AS c, payload.list DO c, item FROM "t/#" WHERE c = 'c1'`)).toEqual([
      { c: "c1", item: 1 },
      { c: "c1", item: 2 },
      { c: "c1", item: 3 },
    ]);
  });

  it("without DO, each row is the whole context plus the element", () => {
    const rows = run(`FOREACH payload.list AS x FROM "t/#"`)!;
    expect(rows).toHaveLength(3);
    expect(rows[1].x).toBe(2);
    expect(rows[1].clientid).toBe("c1");
    expect(rows[1].topic).toBe("t/a/b");
  });

  it("DO fields see earlier FOREACH fields and earlier DO aliases; * copies the context", () => {
    const rows = run(
      `FOREACH upper(clientid) AS who, payload.list DO item * 10 AS t10, t10 + 1 AS t11, who FROM "t/#"`,
    );
    expect(rows).toEqual([
      { t10: 10, t11: 11, who: "C1" },
      { t10: 20, t11: 21, who: "C1" },
      { t10: 30, t11: 31, who: "C1" },
    ]);
    const star = run(`FOREACH payload.list DO * FROM "t/#"`)!;
    expect(star[0].item).toBe(1);
    expect(star[0].username).toBe("u1");
  });

  it("a non-list or an empty list gives null (no_result)", () => {
    expect(run(`FOREACH payload.msg FROM "t/#"`)).toBeNull();
    expect(run(`FOREACH payload.missing FROM "t/#"`)).toBeNull();
    expect(run(`FOREACH [] FROM "t/#"`)).toBeNull();
  });

  it("a range literal and a function result can be iterated", () => {
    expect(run(`FOREACH [1..3] DO item * item AS sq FROM "t"`)).toEqual([{ sq: 1 }, { sq: 4 }, { sq: 9 }]);
    expect(run(`FOREACH split('a,b', ',') AS p DO p FROM "t"`)).toEqual([{ p: "a" }, { p: "b" }]);
  });

  it("nested payload lists and INCASE on item fields", () => {
    const ctx = {
      payload: JSON.stringify({
        date: "2020-04-24",
        sensors: [
          { name: "a", idx: 0 },
          { name: "b", idx: 1 },
        ],
      }),
    };
    expect(
      run(`FOREACH payload.sensors DO item.name AS name, payload.date AS date INCASE item.idx > 0 FROM "t"`, ctx),
    ).toEqual([{ name: "b", date: "2020-04-24" }]);
  });

  it("isForeach", () => {
    expect(compileRule(`FOREACH payload.l FROM "t"`).isForeach).toBe(true);
    expect(compileRule(`SELECT * FROM "t"`).isForeach).toBe(false);
  });

  it("the last FOREACH field cannot be *", () => {
    expect(sqlError(`FOREACH * FROM "t"`)).toBe(
      "line 1, column 9: the last FOREACH field must be an expression giving a list, not *",
    );
  });

  it("an exception inside an element aborts the evaluation", () => {
    expect(() => run(`FOREACH payload.list DO item + 'x' AS y FROM "t"`)).toThrow(RuleEvalError);
  });
});

describe("FROM sources of both dialects", () => {
  const cases: [string, { topics: string[]; events: string[] }][] = [
    [`"t/#"`, { topics: ["t/#"], events: [] }],
    [`"t/#", "a/+/b", "t/#"`, { topics: ["t/#", "a/+/b"], events: [] }],
    [`"$events/client_connected"`, { topics: [], events: ["client.connected"] }],
    [`"client.connected"`, { topics: [], events: ["client.connected"] }],
    [`"$events/client_connected", "client.connected"`, { topics: [], events: ["client.connected"] }],
    [`"message.publish"`, { topics: [], events: ["message.publish"] }],
    [`"$events/message_publish"`, { topics: [], events: ["message.publish"] }],
    [`"message.deliver"`, { topics: [], events: ["message.delivered"] }],
    [`"$events/message_delivered"`, { topics: [], events: ["message.delivered"] }],
    [`"message.acked", "message.dropped"`, { topics: [], events: ["message.acked", "message.dropped"] }],
    [`"$events/delivery_dropped"`, { topics: [], events: ["delivery.dropped"] }],
    [`"$events/client_disconnected"`, { topics: [], events: ["client.disconnected"] }],
    [`"$events/client_connack"`, { topics: [], events: ["client.connack"] }],
    [`"$events/client_check_acl_complete"`, { topics: [], events: ["client.check_acl_complete"] }],
    [`"client.subscribe", "client.unsubscribe"`, { topics: [], events: ["client.subscribe", "client.unsubscribe"] }],
    [
      `"$events/session_subscribed", "session.unsubscribed"`,
      { topics: [], events: ["session.subscribed", "session.unsubscribed"] },
    ],
    [
      `"$message"`,
      { topics: [], events: ["message.publish", "message.delivered", "message.acked", "message.dropped"] },
    ],
    [`"$session"`, { topics: [], events: ["session.subscribed", "session.unsubscribed"] }],
    [
      `"$client"`,
      {
        topics: [],
        events: [
          "client.connected",
          "client.disconnected",
          "client.connack",
          "client.check_acl_complete",
          "client.subscribe",
          "client.unsubscribe",
        ],
      },
    ],
    [`"t/1", "$events/client_connected"`, { topics: ["t/1"], events: ["client.connected"] }],
    [`"$SYS/#"`, { topics: ["$SYS/#"], events: [] }],
  ];
  it.each(cases)("FROM %s", (from, want) => {
    const r = compileRule(`SELECT * FROM ${from}`);
    expect({ topics: r.sources.topics, events: r.sources.events }).toEqual(want);
  });

  it("$any is every event", () => {
    expect(compileRule(`SELECT * FROM "$any"`).sources.events).toHaveLength(13);
  });

  it("raw keeps the names as written", () => {
    expect(compileRule(`SELECT * FROM "t/#", "client.connected"`).sources.raw).toEqual(["t/#", "client.connected"]);
  });

  const bad: [string, string][] = [
    [`SELECT * FROM "$events/nope"`, "line 1, column 15: unknown event: $events/nope"],
    [`SELECT * FROM "t/#/x"`, "line 1, column 15: invalid topic filter: t/#/x"],
    [`SELECT * FROM "t/a+"`, "line 1, column 15: invalid topic filter: t/a+"],
    [`SELECT * FROM "t", "$share/g/t"`, "line 1, column 20: a shared subscription cannot be a rule source: $share/g/t"],
  ];
  it.each(bad)("%s", (sql, msg) => {
    expect(sqlError(sql)).toBe(msg);
  });

  it("3.x style: event name in FROM and topic filtering in WHERE", () => {
    const rule = compileRule(`SELECT client_id, payload.msg AS msg FROM "message.publish" WHERE topic =~ 't/#'`);
    expect(rule.evaluate(CTX)).toEqual([{ client_id: "c1", msg: "hello" }]);
    expect(rule.evaluate({ ...CTX, topic: "x/y" })).toBeNull();
  });
});

describe("compile once, evaluate many times", () => {
  it("evaluate never parses again and is fast", () => {
    const rule = compileRule(
      `SELECT payload.n AS n, upper(clientid) AS c, payload.list[2] AS second, CASE WHEN qos > 0 THEN 'ack' ELSE 'none' END AS mode FROM "t/#" WHERE n > 1 and topic =~ 't/#'`,
    );
    const before = parseCount();
    const start = performance.now();
    let matched = 0;
    for (let i = 0; i < 10_000; i++) {
      const rows = rule.evaluate({ ...CTX, payload: `{"n":${i},"list":[1,2]}` });
      if (rows !== null) matched++;
    }
    const ms = performance.now() - start;
    expect(parseCount()).toBe(before);
    expect(matched).toBe(9_998);
    expect(ms).toBeLessThan(2_000);
  });

  it("compileRule parses exactly once", () => {
    const before = parseCount();
    const rule = compileRule(`FOREACH payload.sensors AS s DO s.v AS v INCASE s.v > 0 FROM "t/#"`);
    expect(parseCount()).toBe(before + 1);
    for (let i = 0; i < 100; i++) rule.evaluate(CTX);
    expect(parseCount()).toBe(before + 1);
  });
});

describe("rule exceptions", () => {
  it("are RuleEvalErrors with a reason", () => {
    const rule = compileRule(`SELECT payload.x FROM "t"`);
    let error: unknown;
    try {
      rule.evaluate({ payload: "{bad" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(RuleEvalError);
    expect((error as RuleEvalError).reason).toMatch(/^decode_json_failed/);
  });

  it("an exception in WHERE is an exception, not a mismatch", () => {
    expect(() => run(`SELECT 1 AS x FROM "t" WHERE lower(qos) = 'a'`)).toThrow(RuleEvalError);
  });

  it("PAYLOAD fixture is what the tests think", () => {
    expect(JSON.parse(CTX.payload as string)).toEqual(PAYLOAD);
  });
});
