// SQL functions: context functions, topic functions, random/uuid, proc_dict and kv_store;
// unknown functions and wrong arities are compile errors; the library is complete.
import { Buffer } from "node:buffer";
import { beforeEach, describe, expect, it } from "vitest";
import { compileRule } from "../../src/rules/runtime/compile.ts";
import { termDecode } from "../../src/rules/runtime/functions/codec.ts";
import { functionNames } from "../../src/rules/runtime/functions/index.ts";
import { clearKvStore } from "../../src/rules/runtime/functions/misc.ts";
import { CTX, evalError, run, sqlError, value } from "./helpers.ts";

describe("context functions", () => {
  const cases: [string, unknown][] = [
    ["msgid()", CTX.id],
    ["qos()", 1],
    ["flags()", { retain: true, dup: false }],
    ["flag('retain')", true],
    ["flag('dup')", false],
    ["flag('nope')", undefined],
    ["topic()", "t/a/b"],
    ["topic(1)", "t"],
    ["topic(3)", "b"],
    ["topic(4)", undefined],
    ["topic(0)", undefined],
    ["clientid()", "c1"],
    ["clientip()", "10.0.0.1"],
    ["peerhost()", "10.0.0.1"],
    ["username()", "u1"],
    ["payload()", CTX.payload],
    ["payload('msg')", "hello"],
    ["payload('nested.a.b')", "deep"],
    ["payload('missing')", undefined],
    ["null()", undefined],
    ["peername()", "10.0.0.1:5000"],
    ["timestamp()", 1700000000000],
    ["headers()", { proto_ver: 5 }],
    ["header('proto_ver')", 5],
    ["header('x')", undefined],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("reads the 3.x spellings and derives the host from peername", () => {
    const ctx = { client_id: "old", peername: "192.168.1.2:1234", topic: "x" };
    expect(value("clientid()", ctx)).toBe("old");
    expect(value("peerhost()", ctx)).toBe("192.168.1.2");
    expect(value("clientip()", { peername: "[::1]:1883" })).toBe("::1");
    expect(value("flags()", {})).toEqual({});
    expect(value("clientid()", { from: "f" })).toBe("f");
  });

  it("sees aliases selected before", () => {
    expect(run(`SELECT 'x/y' AS topic, topic(2) AS second FROM "t"`)).toEqual([{ topic: "x/y", second: "y" }]);
  });

  it("payload(path) needs a JSON payload", () => {
    expect(evalError("payload('a')", { payload: "plain" })).toMatch(/^decode_json_failed/);
  });
});

describe("topic functions", () => {
  const cases: [string, boolean][] = [
    ["contains_topic(topic_filters, 't/1')", true],
    ["contains_topic(topic_filters, 't/2/+')", true],
    ["contains_topic(topic_filters, 't/2/x')", false],
    ["contains_topic(topic_filters, 't/1', 0)", true],
    ["contains_topic(topic_filters, 't/1', 1)", false],
    ["contains_topic(topic_filters, 'a/#', 2)", true],
    ["contains_topic_match(topic_filters, 't/#')", true],
    ["contains_topic_match(topic_filters, 't/+')", true],
    ["contains_topic_match(topic_filters, 'x/#')", false],
    ["contains_topic_match(topic_filters, 'a/#')", true],
    ["contains_topic_match(topic_filters, '#', 0)", true],
    ["contains_topic_match(topic_filters, 't/2/#', 1)", true],
    ["contains_topic_match(topic_filters, 't/2/#', 2)", false],
    ["contains_topic([], 't')", false],
    ["contains_topic(['t/1', 't/2'], 't/2')", true],
    ["contains_topic([['t/1', map_put('qos', 1, map_new())]], 't/1', 1)", true],
    [
      "contains_topic([map_put('sub_opts', map_put('qos', 2, map_new()), map_put('topic', 'x', map_new()))], 'x', 2)",
      true,
    ],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("needs a list", () => {
    expect(evalError("contains_topic('t/1', 't/1')")).toMatch(/^bad_argument: contains_topic expects an array/);
  });

  it("filters the 3.x client.subscribe list in WHERE", () => {
    const sql = `SELECT clientid FROM "client.subscribe" WHERE contains_topic_match(topic_filters, 't/#')`;
    expect(run(sql)).toEqual([{ clientid: "c1" }]);
    expect(run(sql, { ...CTX, topic_filters: [{ topic: "x", qos: 0 }] })).toBeNull();
  });
});

describe("random, uuid, proc_dict, kv_store", () => {
  beforeEach(() => clearKvStore());

  it("random is a float in [0, 1)", () => {
    for (let i = 0; i < 20; i++) {
      const r = value("random()") as number;
      expect(r).toBeGreaterThanOrEqual(0);
      expect(r).toBeLessThan(1);
    }
  });

  it("uuid_v4 and uuid_v4_no_hyphen", () => {
    expect(value("uuid_v4()")).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(value("uuid_v4_no_hyphen()")).toMatch(/^[0-9a-f]{12}4[0-9a-f]{3}[89ab][0-9a-f]{15}$/);
    expect(value("uuid_v4()")).not.toBe(value("uuid_v4()"));
  });

  it("proc_dict lives for one evaluation; put and del return the previous value", () => {
    const rule = compileRule(
      `SELECT proc_dict_get('k') AS before, proc_dict_put('k', 1) AS p1, proc_dict_put('k', 2) AS p2, proc_dict_get('k') AS now, proc_dict_del('k') AS del, proc_dict_get('k') AS after FROM "t"`,
    );
    const want = { before: undefined, p1: undefined, p2: 1, now: 2, del: 2, after: undefined };
    expect(rule.evaluate(CTX)).toEqual([want]);
    expect(rule.evaluate(CTX)).toEqual([want]);
  });

  it("kv_store is shared across evaluations and rules", () => {
    expect(value("kv_store_get('k')")).toBeUndefined();
    expect(value("kv_store_get('k', 'dflt')")).toBe("dflt");
    expect(value("kv_store_put('k', payload.n)")).toBe(true);
    expect(value("kv_store_get('k')")).toBe(5);
    expect(run(`SELECT kv_store_get('k') + 1 AS n FROM "other"`)).toEqual([{ n: 6 }]);
    expect(value("kv_store_put(map, 'by map')")).toBe(true);
    expect(value("kv_store_get(map_put('n', 1, map_put('k', 'v', map_new())))")).toBe("by map");
    expect(value("kv_store_del('k')")).toBe(true);
    expect(value("kv_store_get('k', 0)")).toBe(0);
    expect(value("kv_store_put(1, 'one')")).toBe(true);
    expect(value("kv_store_get('1')")).toBeUndefined();
    expect(value("kv_store_get(1)")).toBe("one");
  });
});

describe("unknown functions and arity are compile errors", () => {
  const cases: [string, string][] = [
    [`SELECT nope(1) FROM "t"`, "line 1, column 8: sql_function_not_supported: nope"],
    [`SELECT a FROM "t" WHERE\n  x(a)`, "line 2, column 3: sql_function_not_supported: x"],
    [`SELECT schema_decode('s', payload) FROM "t"`, "line 1, column 8: sql_function_not_supported: schema_decode"],
    [`SELECT schema_encode('s', payload) FROM "t"`, "line 1, column 8: sql_function_not_supported: schema_encode"],
    [`SELECT lower() FROM "t"`, "line 1, column 8: sql_function_arity_error: lower takes 1 argument(s), got 0"],
    [
      `SELECT substr('a') FROM "t"`,
      "line 1, column 8: sql_function_arity_error: substr takes 2 or 3 argument(s), got 1",
    ],
    [
      `SELECT subbits('a', 1, 2, 3) FROM "t"`,
      "line 1, column 8: sql_function_arity_error: subbits takes 2, 3 or 6 argument(s), got 4",
    ],
    [
      `SELECT sprintf() FROM "t"`,
      "line 1, column 8: sql_function_arity_error: sprintf takes at least 1 argument(s), got 0",
    ],
    [
      `SELECT now_timestamp(1, 2) FROM "t"`,
      "line 1, column 8: sql_function_arity_error: now_timestamp takes 0 or 1 argument(s), got 2",
    ],
    [`FOREACH payload.l DO nope(item) FROM "t"`, "line 1, column 22: sql_function_not_supported: nope"],
    [
      `SELECT 1 FROM "t" WHERE a = 1 and mod(1) = 1`,
      "line 1, column 35: sql_function_arity_error: mod takes 2 argument(s), got 1",
    ],
  ];
  it.each(cases)("%j", (sql, msg) => {
    expect(sqlError(sql)).toBe(msg);
  });

  it("function names are case-insensitive", () => {
    expect(value("UPPER('a')")).toBe("A");
    expect(value("Lower('A')")).toBe("a");
  });
});

describe("the library is complete (emqx-facts 1.2, minus the enterprise schema functions)", () => {
  const expected = [
    "msgid qos flags flag topic clientid clientip peerhost username payload null",
    "+ - * / div mod eq",
    "abs acos acosh asin asinh atan atanh ceil cos cosh exp floor log log10 log2 round sin sinh sqrt tan tanh fmod power",
    "bitnot bitand bitor bitxor bitsl bitsr bitsize subbits",
    "str str_utf8 bool int float float2str map bin2hexstr hexstr2bin",
    "is_null is_not_null is_str is_bool is_int is_float is_num is_map is_array",
    "lower upper trim ltrim rtrim reverse strlen ascii substr split tokens concat sprintf_s sprintf pad replace regex_match regex_replace find",
    "map_new map_get map_put mget mput",
    "nth length sublist first last contains",
    "md5 sha sha256",
    "gzip gunzip zip unzip zip_compress zip_uncompress",
    "base64_encode base64_decode json_encode json_decode term_encode term_decode",
    "now_timestamp now_rfc3339 unix_ts_to_rfc3339 rfc3339_to_unix_ts format_date date_to_unix_ts timezone_to_second mongo_date",
    "contains_topic contains_topic_match",
    "random uuid_v4 uuid_v4_no_hyphen proc_dict_get proc_dict_put proc_dict_del kv_store_get kv_store_put kv_store_del",
  ]
    .join(" ")
    .split(" ");
  it.each(expected)("%s exists", (name) => {
    expect(functionNames()).toContain(name);
  });
});

describe("term_decode stand-in", () => {
  it("refuses JSON it did not make", () => {
    expect(() => termDecode(Buffer.concat([Buffer.from([0x83]), Buffer.from('{"x":1}')]))).toThrow(
      /term_decode of data term_encode did not make/,
    );
  });
});
