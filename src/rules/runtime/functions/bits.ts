// Bit functions (emqx-facts 1.2): bitnot, bitand, bitor, bitxor, bitsl, bitsr on integers
// (computed as arbitrary-precision integers, then back to numbers), bitsize of a binary, and
// subbits, which reads a field out of a binary:
//   subbits(bits, len)                       the first len bits, unsigned big-endian integer
//   subbits(bits, start, len)                from the 1-based bit offset start
//   subbits(bits, start, len, type, signedness, endianness)
//       type integer | float (16, 32 or 64 bits) | bits (a binary), signed | unsigned,
//       big | little.
// A start beyond the data gives undefined; a len longer than what remains takes what remains.
// Little-endian applies to whole bytes: a little-endian integer whose length is not a multiple
// of 8 is read big-endian. `bits` results are binaries padded with zero bits to whole bytes.

import { Buffer } from "node:buffer";
import { RuleEvalError } from "../errors.ts";
import { binOut } from "../values.ts";
import { argBytes, argInt, argOption } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

const MAX_SHIFT = 1100;

function big(fname: string, args: unknown[], i: number): bigint {
  return BigInt(argInt(fname, args, i));
}

function shift(fname: string, args: unknown[], left: boolean): number {
  const x = big(fname, args, 0);
  const n = argInt(fname, args, 1);
  if (Math.abs(n) > MAX_SHIFT) throw new RuleEvalError(`badarith: ${fname} by ${n}`);
  const s = BigInt(left ? n : -n);
  return Number(s >= 0n ? x << s : x >> -s);
}

type SubType = "integer" | "float" | "bits";

function readBits(data: Buffer, begin: number, n: number): bigint {
  let v = 0n;
  for (let b = begin; b < begin + n; b++) {
    const bit = (data[b >> 3] >> (7 - (b & 7))) & 1;
    v = (v << 1n) | BigInt(bit);
  }
  return v;
}

function bytesOf(v: bigint, nbytes: number): Buffer {
  const out = Buffer.alloc(nbytes);
  for (let i = nbytes - 1; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

function subbits(data: Buffer, start: number, len: number, type: SubType, signed: boolean, little: boolean): unknown {
  const total = data.length * 8;
  const begin = start - 1;
  if (begin < 0 || begin >= total) return undefined;
  const n = len < 0 || len > total - begin ? total - begin : len;
  let v = readBits(data, begin, n);
  if (type === "bits") {
    const nbytes = Math.ceil(n / 8);
    const padded = bytesOf(v << BigInt(nbytes * 8 - n), nbytes);
    return n % 8 === 0 ? binOut(padded) : padded;
  }
  if (little && n % 8 === 0 && n > 8)
    v = BigInt(
      `0x${bytesOf(v, n / 8)
        .reverse()
        .toString("hex")}`,
    );
  if (type === "float") {
    if (n !== 16 && n !== 32 && n !== 64) throw new RuleEvalError(`badarg: subbits float of ${n} bits`);
    const buf = bytesOf(v, n / 8);
    return n === 64 ? buf.readDoubleBE(0) : n === 32 ? buf.readFloatBE(0) : halfToNumber(buf.readUInt16BE(0));
  }
  if (signed && n > 0 && v >> BigInt(n - 1) === 1n) v -= 1n << BigInt(n);
  return Number(v);
}

function halfToNumber(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exp = (h >> 10) & 0x1f;
  const frac = h & 0x3ff;
  if (exp === 0) return sign * 2 ** -14 * (frac / 1024);
  if (exp === 0x1f) return frac ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exp - 15) * (1 + frac / 1024);
}

export const bitFunctions: FnTable = {
  bitnot: fn(1, (a) => Number(~big("bitnot", a, 0))),
  bitand: fn(2, (a) => Number(big("bitand", a, 0) & big("bitand", a, 1))),
  bitor: fn(2, (a) => Number(big("bitor", a, 0) | big("bitor", a, 1))),
  bitxor: fn(2, (a) => Number(big("bitxor", a, 0) ^ big("bitxor", a, 1))),
  bitsl: fn(2, (a) => shift("bitsl", a, true)),
  bitsr: fn(2, (a) => shift("bitsr", a, false)),
  bitsize: fn(1, (a) => argBytes("bitsize", a, 0).length * 8),
  subbits: fn([2, 3, 6], (a) => {
    const data = argBytes("subbits", a, 0);
    if (a.length === 2) return subbits(data, 1, argInt("subbits", a, 1), "integer", false, false);
    const start = argInt("subbits", a, 1);
    const len = argInt("subbits", a, 2);
    if (a.length === 3) return subbits(data, start, len, "integer", false, false);
    const type = argOption("subbits", a, 3, ["integer", "float", "bits"] as const);
    const sign = argOption("subbits", a, 4, ["signed", "unsigned"] as const);
    const endian = argOption("subbits", a, 5, ["big", "little"] as const);
    return subbits(data, start, len, type, sign === "signed", endian === "little");
  }),
};
