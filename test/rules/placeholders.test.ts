// `${var}` templates rendered against a selected row.
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
import { describe, expect, it } from "vitest";
import { compileTemplate, renderTemplate, templateVars } from "../../src/rules/runtime/placeholders.ts";

const ROW = {
  clientid: "c1",
  qos: 1,
  f: 1.5,
  ok: true,
  payload: '{"a":{"b":"deep"}}',
  map: { x: 1, y: [1, 2] },
  list: [1, "a"],
  nul: null,
  undef: undefined,
  bin: Buffer.from("bytes"),
  nested: { k: { v: "nv" } },
};

describe("placeholders", () => {
  const cases: [string, string][] = [
    ["${clientid}", "c1"],
    ["repub/to/${clientid}", "repub/to/c1"],
    ["${clientid}/${qos}", "c1/1"],
    ["q=${qos} f=${f} ok=${ok}", "q=1 f=1.5 ok=true"],
    ["${map}", '{"x":1,"y":[1,2]}'],
    ["${list}", '[1,"a"]'],
    ["${map.x}", "1"],
    ["${map.y}", "[1,2]"],
    ["${nested.k.v}", "nv"],
    ["${payload}", '{"a":{"b":"deep"}}'],
    ["${payload.a.b}", "deep"],
    ["${missing}", "undefined"],
    ["${map.missing.deeper}", "undefined"],
    ["${undef}", "undefined"],
    ["${nul}", "null"],
    ["${bin}", "bytes"],
    ["${ clientid }", "c1"],
    ["no placeholders", "no placeholders"],
    ["", ""],
    ["${}", "${}"],
    ["${unclosed", "${unclosed"],
    ["$clientid {qos}", "$clientid {qos}"],
    ["a${clientid}b${qos}c", "ac1b1c"],
    ['{"id": "${clientid}", "qos": ${qos}}', '{"id": "c1", "qos": 1}'],
  ];
  it.each(cases)("%j", (tmpl, want) => {
    expect(renderTemplate(tmpl, ROW)).toBe(want);
  });

  it("a compiled template renders many rows", () => {
    const t = compileTemplate("${clientid}:${qos}");
    expect(t({ clientid: "a", qos: 0 })).toBe("a:0");
    expect(t({ clientid: "b" })).toBe("b:undefined");
  });

  it("lists the variables a template uses", () => {
    expect(templateVars("${a}/${b.c} and ${a}")).toEqual(["a", "b.c", "a"]);
    expect(templateVars("plain")).toEqual([]);
  });
});
