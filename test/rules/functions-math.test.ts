// SQL functions: math, the operators as functions, and bits.
import { describe, expect, it } from "vitest";
import { evalError, value } from "./helpers.ts";

describe("math functions", () => {
  const cases: [string, number][] = [
    ["abs(-3)", 3],
    ["abs(2.5)", 2.5],
    ["abs(0)", 0],
    ["ceil(1.2)", 2],
    ["ceil(-1.2)", -1],
    ["floor(1.8)", 1],
    ["floor(-1.2)", -2],
    ["round(2.5)", 3],
    ["round(-2.5)", -3],
    ["round(2.4)", 2],
    ["round(7)", 7],
    ["sqrt(16)", 4],
    ["power(2, 10)", 1024],
    ["power(4, 0.5)", 2],
    ["power(2, -1)", 0.5],
    ["exp(0)", 1],
    ["log(1)", 0],
    ["log10(1000)", 3],
    ["log2(8)", 3],
    ["fmod(7, 3)", 1],
    ["fmod(-7, 3)", -1],
    ["fmod(7.5, 2)", 1.5],
    ["sin(0)", 0],
    ["cos(0)", 1],
    ["tan(0)", 0],
    ["asin(1)", Math.PI / 2],
    ["acos(1)", 0],
    ["atan(1)", Math.PI / 4],
    ["sinh(0)", 0],
    ["cosh(0)", 1],
    ["tanh(0)", 0],
    ["asinh(0)", 0],
    ["acosh(1)", 0],
    ["atanh(0)", 0],
    ["abs(payload.neg) + ceil(payload.f)", 5],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBeCloseTo(want, 12);
  });

  const errors: [string, RegExp][] = [
    ["sqrt(-1)", /^badarith: sqrt\(-1\)/],
    ["log(0)", /^badarith: log\(0\)/],
    ["acos(2)", /^badarith/],
    ["fmod(1, 0)", /^badarith/],
    ["power(-8, 0.5)", /^badarith/],
    ["abs('x')", /^bad_argument: abs expects a number as argument 1, got string 'x'/],
    ["sqrt(missing)", /^bad_argument: sqrt expects a number/],
    ["power(2, 'a')", /^bad_argument: power expects a number as argument 2/],
  ];
  it.each(errors)("%s is a rule exception", (e, re) => {
    expect(evalError(e)).toMatch(re);
  });
});

describe("operators as functions", () => {
  const cases: [string, unknown][] = [
    ['"+"(1, 2)', 3],
    ["\"+\"('a', 'b')", "ab"],
    ['"-"(5, 7)', -2],
    ['"*"(3, 4)', 12],
    ['"/"(9, 2)', 4.5],
    ['"div"(9, 2)', 4],
    ["mod(9, 4)", 1],
    ["mod(-9, 4)", -1],
    ["mod(9, -4)", 1],
    ["eq(1, 1)", true],
    ["eq('a', 'a')", true],
    ["eq('1', 1)", false],
    ["eq(payload.list, [1,2,3])", true],
    ["eq(missing, nullish)", true],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  it("mod and div need integers", () => {
    expect(evalError("mod(1.5, 1)")).toMatch(/^unsupported_function_operator_type/);
    expect(evalError('"div"(1, 0)')).toBe("badarith: division by zero");
  });
});

describe("bit functions", () => {
  const cases: [string, unknown][] = [
    ["bitnot(0)", -1],
    ["bitnot(5)", -6],
    ["bitand(12, 10)", 8],
    ["bitor(12, 10)", 14],
    ["bitxor(12, 10)", 6],
    ["bitsl(1, 4)", 16],
    ["bitsl(1, 40)", 2 ** 40],
    ["bitsl(8, -2)", 2],
    ["bitsr(16, 2)", 4],
    ["bitsr(-16, 2)", -4],
    ["bitsr(1, 1)", 0],
    ["bitsize('abc')", 24],
    ["bitsize('')", 0],
    ["bitsize(hexstr2bin('FF00'))", 16],
    // subbits(bits, len): the first len bits, unsigned big-endian
    ["subbits(hexstr2bin('F0'), 4)", 15],
    ["subbits(hexstr2bin('ABCD'), 16)", 0xabcd],
    ["subbits(hexstr2bin('ABCD'), 32)", 0xabcd],
    // subbits(bits, start, len)
    ["subbits(hexstr2bin('F0'), 5, 4)", 0],
    ["subbits(hexstr2bin('0F'), 5, 4)", 15],
    ["subbits(hexstr2bin('ABCD'), 9, 8)", 0xcd],
    ["subbits(hexstr2bin('ABCD'), 17, 8)", undefined],
    ["subbits(hexstr2bin('ABCD'), 0, 8)", undefined],
    // subbits with type, signedness, endianness
    ["subbits(hexstr2bin('FF'), 1, 8, 'integer', 'signed', 'big')", -1],
    ["subbits(hexstr2bin('FF'), 1, 8, 'integer', 'unsigned', 'big')", 255],
    ["subbits(hexstr2bin('FFFE'), 1, 16, 'integer', 'signed', 'big')", -2],
    ["subbits(hexstr2bin('0102'), 1, 16, 'integer', 'unsigned', 'little')", 0x0201],
    ["subbits(hexstr2bin('FEFF'), 1, 16, 'integer', 'signed', 'little')", -2],
    ["subbits(hexstr2bin('3F800000'), 1, 32, 'float', 'unsigned', 'big')", 1],
    ["subbits(hexstr2bin('0000803F'), 1, 32, 'float', 'signed', 'little')", 1],
    ["subbits(hexstr2bin('4009220000000000'), 1, 64, 'float', 'unsigned', 'big')", 3.1416015625],
    ["subbits(hexstr2bin('3C00'), 1, 16, 'float', 'unsigned', 'big')", 1],
    ["bin2hexstr(subbits(hexstr2bin('ABCD'), 5, 8, 'bits', 'unsigned', 'big'))", "BC"],
    ["bin2hexstr(subbits(hexstr2bin('ABCD'), 1, 4, 'bits', 'unsigned', 'big'))", "A0"],
    ["subbits('abc', 9, 8, 'bits', 'unsigned', 'big')", "b"],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toEqual(want);
  });

  const errors: [string, RegExp][] = [
    ["bitand(1.5, 1)", /^bad_argument: bitand expects an integer as argument 1/],
    ["bitnot('a')", /^bad_argument: bitnot expects an integer/],
    ["bitsl(1, 5000)", /^badarith: bitsl by 5000/],
    ["bitsize(1)", /^bad_argument: bitsize expects a binary/],
    ["subbits(hexstr2bin('FF'), 1, 8, 'float', 'unsigned', 'big')", /^badarg: subbits float of 8 bits/],
    [
      "subbits(hexstr2bin('FF'), 1, 8, 'int', 'unsigned', 'big')",
      /^bad_argument: subbits expects 'integer' \| 'float' \| 'bits' as argument 4/,
    ],
    ["subbits(hexstr2bin('FF'), 1, 8, 'integer', 'x', 'big')", /argument 5/],
    ["subbits(hexstr2bin('FF'), 1, 8, 'integer', 'signed', 'middle')", /argument 6/],
  ];
  it.each(errors)("%s is a rule exception", (e, re) => {
    expect(evalError(e)).toMatch(re);
  });
});
