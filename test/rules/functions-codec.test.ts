// SQL functions: hashes, compression, base64, JSON and the term_encode stand-in.
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { CTX, evalError, value } from "./helpers.ts";

describe("hash functions", () => {
  const cases: [string, string][] = [
    ["md5('')", "d41d8cd98f00b204e9800998ecf8427e"],
    ["md5('abc')", "900150983cd24fb0d6963f7d28e17f72"],
    ["sha('abc')", "a9993e364706816aba3e25717850c26c9cd0d89d"],
    ["sha256('abc')", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"],
    ["sha256('')", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("hashes binaries by their bytes", () => {
    expect(value("md5(hexstr2bin('616263'))")).toBe("900150983cd24fb0d6963f7d28e17f72");
    expect(value("sha256(clientid)")).toMatch(/^[0-9a-f]{64}$/);
  });

  it("needs a string or binary", () => {
    expect(evalError("md5(1)")).toMatch(/^bad_argument: md5 expects a binary/);
  });
});

describe("compression functions", () => {
  const cases: [string, unknown][] = [
    ["gunzip(gzip('hello'))", "hello"],
    ["unzip(zip('hello'))", "hello"],
    ["zip_uncompress(zip_compress('hello'))", "hello"],
    ["bin2hexstr(zip_compress(''))", "789C030000000001"],
    ["bin2hexstr(zip('a'))", "4B0400"],
    ["gunzip(gzip(''))", ""],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("round-trips the payload and gives binaries", () => {
    const z = value("gzip(payload)");
    expect(Buffer.isBuffer(z)).toBe(true);
    expect(gzipSync(Buffer.from("x")).subarray(0, 2)).toEqual((z as Buffer).subarray(0, 2));
    expect(value("json_decode(gunzip(gzip(payload))).msg")).toBe("hello");
  });

  it("corrupt input is a rule exception", () => {
    expect(evalError("gunzip('not gzip')")).toMatch(/^data_error: gunzip/);
    expect(evalError("unzip(hexstr2bin('ffff'))")).toMatch(/^data_error: unzip/);
    expect(evalError("zip_uncompress('xyz')")).toMatch(/^data_error: zip_uncompress/);
    expect(evalError("gzip(1)")).toMatch(/^bad_argument: gzip expects a binary/);
  });
});

describe("codec functions", () => {
  const cases: [string, unknown][] = [
    ["base64_encode('hello')", "aGVsbG8="],
    ["base64_encode('')", ""],
    ["base64_encode(hexstr2bin('fffe'))", "//4="],
    ["base64_decode('aGVsbG8=')", "hello"],
    ["base64_decode('aGVsbG8')", "hello"],
    ["base64_decode('aGVs\nbG8=')", "hello"],
    ["base64_decode('//4=')", Buffer.from([0xff, 0xfe])],
    ["base64_decode(base64_encode(payload))", CTX.payload],
    ["json_encode(map)", '{"k":"v","n":1}'],
    ["json_encode(payload.list)", "[1,2,3]"],
    ["json_encode('a')", '"a"'],
    ["json_encode(1.5)", "1.5"],
    ["json_encode(missing)", "null"],
    ["json_encode([missing])", "[null]"],
    ["json_encode(hexstr2bin('616263'))", '"abc"'],
    ['json_decode(\'{"a":[1,{"b":null}]}\')', { a: [1, { b: null }] }],
    ["json_decode('3')", 3],
    ["json_decode('\"s\"')", "s"],
    ["json_decode(payload).nested.a.b", "deep"],
    ["json_decode(json_encode(map))", { k: "v", n: 1 }],
    ["term_decode(term_encode(map))", { k: "v", n: 1 }],
    [
      "term_decode(term_encode(payload.sensors))",
      [
        { id: 1, v: 10 },
        { id: 2, v: 20 },
        { id: 3, v: 30 },
      ],
    ],
    ["term_decode(term_encode('str'))", "str"],
    ["term_decode(term_encode(12))", 12],
    ["term_decode(term_encode(true))", true],
    ["term_decode(term_encode(missing))", null],
    ["term_decode(term_encode(hexstr2bin('fffe')))", Buffer.from([0xff, 0xfe])],
    ["term_decode(term_encode(json_decode('{\"$bin\":1}')))", { $bin: 1 }],
    ["is_str(term_encode(1))", true],
    ["bin2hexstr(term_encode(1))", "8331"],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("term_decode round-trips a date", () => {
    expect(value("term_decode(term_encode(mongo_date(1000)))")).toEqual(new Date(1000));
  });

  const errors: [string, RegExp][] = [
    ["base64_decode('@@@')", /^badarg: base64_decode of invalid base64/],
    ["base64_decode('a')", /^badarg: base64_decode/],
    ["base64_decode(1)", /^bad_argument: base64_decode expects a string/],
    ["base64_encode(1)", /^bad_argument: base64_encode expects a binary/],
    ["json_decode('{bad')", /^decode_json_failed: '\{bad'/],
    ["json_decode(1)", /^bad_argument: json_decode expects a binary/],
    ["term_decode('{}')", /^badarg: term_decode of data term_encode did not make/],
    ["term_decode(hexstr2bin('83'))", /^badarg: term_decode/],
  ];
  it.each(errors)("%s is a rule exception", (e, re) => {
    expect(evalError(e)).toMatch(re);
  });
});
