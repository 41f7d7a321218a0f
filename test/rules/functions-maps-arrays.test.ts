// SQL functions: maps (map_get paths, map_put, mget, mput) and arrays.
import { describe, expect, it } from "vitest";
import { CTX, evalError, value } from "./helpers.ts";

describe("map functions", () => {
  const cases: [string, unknown][] = [
    ["map_new()", {}],
    ["map_get('k', map)", "v"],
    ["map_get('missing', map)", undefined],
    ["map_get('missing', map, 'dflt')", "dflt"],
    ["map_get('k', map, 'dflt')", "v"],
    ["map_get('a.b', payload.nested)", "deep"],
    ["map_get('nested.a.b', json_decode(payload))", "deep"],
    ["map_get('a.x', payload.nested, 0)", 0],
    ["map_get('inner.z', payload.json)", 26],
    ["map_get('a', '{\"a\":5}')", 5],
    ["map_get('a', 12, 'd')", "d"],
    ["map_put('x', 1, map)", { k: "v", n: 1, x: 1 }],
    ["map_put('k', 'w', map)", { k: "w", n: 1 }],
    ["map_put('a.b.c', 1, map_new())", { a: { b: { c: 1 } } }],
    ["map_put('a.c', 2, payload.nested)", { a: { b: "deep", c: 2 }, arr: [{ k: "x" }, { k: "y" }] }],
    ["map_put('x', 1, missing)", { x: 1 }],
    ["map_get('y', map_put('y', 3, map))", 3],
    ["mget('k', map)", "v"],
    ["mget('a.b', map)", undefined],
    ["mget('missing', map, 7)", 7],
    ["mget(1, map_put('1', 'one', map_new()))", "one"],
    ["mput('x', 2, map)", { k: "v", n: 1, x: 2 }],
    ["mput('a.b', 2, map_new())", { "a.b": 2 }],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("map_put and mput do not modify their argument", () => {
    const ctx = { ...CTX, m: { a: { b: 1 } } };
    value("map_put('a.b', 2, m)", ctx);
    value("mput('a', 2, m)", ctx);
    expect(ctx.m).toEqual({ a: { b: 1 } });
  });

  const errors: [string, RegExp][] = [
    ["map_get(1, map)", /^bad_argument: map_get expects a string as argument 1/],
    ["mget('k', 'str')", /^badmap: mget of 'str'/],
    ["mput('k', 1, [1])", /^badmap: mput of \[1\]/],
  ];
  it.each(errors)("%s is a rule exception", (e, re) => {
    expect(evalError(e)).toMatch(re);
  });
});

describe("array functions", () => {
  const cases: [string, unknown][] = [
    ["nth(1, payload.list)", 1],
    ["nth(3, payload.list)", 3],
    ["nth(2, ['a', 'b'])", "b"],
    ["length(payload.list)", 3],
    ["length([])", 0],
    ["length(payload.sensors)", 3],
    ["sublist(2, payload.list)", [1, 2]],
    ["sublist(0, payload.list)", []],
    ["sublist(10, payload.list)", [1, 2, 3]],
    ["sublist(2, 2, payload.list)", [2, 3]],
    ["sublist(1, 10, payload.list)", [1, 2, 3]],
    ["sublist(4, 1, payload.list)", []],
    ["sublist(3, 0, payload.list)", []],
    ["first(payload.list)", 1],
    ["last(payload.list)", 3],
    ["first(payload.sensors).v", 10],
    ["contains(2, payload.list)", true],
    ["contains(5, payload.list)", false],
    ["contains('a', payload.strs)", true],
    ["contains('2', payload.list)", false],
    ["contains(map, [map])", true],
    ["contains(1, [])", false],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  const errors: [string, RegExp][] = [
    ["nth(0, payload.list)", /^badarg: nth\(0\) of a list of 3/],
    ["nth(4, payload.list)", /^badarg: nth\(4\)/],
    ["nth(-1, payload.list)", /^badarg/],
    ["nth(1, 'abc')", /^bad_argument: nth expects an array as argument 2, got string/],
    ["length('abc')", /^bad_argument: length expects an array/],
    ["length(missing)", /^bad_argument: length expects an array as argument 1, got undefined/],
    ["sublist(-1, payload.list)", /^badarg: sublist length -1/],
    ["sublist(0, 1, payload.list)", /^badarg: sublist\(0, 1\)/],
    ["sublist(5, 1, payload.list)", /^badarg: sublist\(5, 1\)/],
    ["first([])", /^badarg: first\(\[\]\)/],
    ["last([])", /^badarg: last\(\[\]\)/],
    ["contains(1, map)", /^bad_argument: contains expects an array as argument 2/],
  ];
  it.each(errors)("%s is a rule exception", (e, re) => {
    expect(evalError(e)).toMatch(re);
  });
});
