// Argument checks shared by the SQL functions: each returns the argument in the wanted shape or
// throws a RuleEvalError naming the function, the argument and what it got (the family raised
// function_clause for these).

import type { Buffer } from "node:buffer";
import { RuleEvalError } from "../errors.ts";
import { isInteger, isMap, type Row, short, textOf, toBytes, typeName } from "../values.ts";

export function badArg(fname: string, index: number, want: string, got: unknown): never {
  throw new RuleEvalError(
    `bad_argument: ${fname} expects ${want} as argument ${index + 1}, got ${typeName(got)} ${short(got)}`,
  );
}

export function argStr(fname: string, args: unknown[], i: number): string {
  const t = textOf(args[i]);
  if (t === null) badArg(fname, i, "a string", args[i]);
  return t;
}

export function argBytes(fname: string, args: unknown[], i: number): Buffer {
  const v = args[i];
  if (typeof v === "string" || v instanceof Uint8Array) return toBytes(v);
  return badArg(fname, i, "a binary", v);
}

export function argInt(fname: string, args: unknown[], i: number): number {
  const v = args[i];
  if (!isInteger(v)) badArg(fname, i, "an integer", v);
  return v;
}

export function argNum(fname: string, args: unknown[], i: number): number {
  const v = args[i];
  if (typeof v !== "number") badArg(fname, i, "a number", v);
  return v;
}

export function argList(fname: string, args: unknown[], i: number): unknown[] {
  const v = args[i];
  if (!Array.isArray(v)) badArg(fname, i, "an array", v);
  return v;
}

export function argMap(fname: string, args: unknown[], i: number): Row {
  const v = args[i];
  if (!isMap(v)) badArg(fname, i, "a map", v);
  return v;
}

/** A string argument that must be one of `options`. */
export function argOption<T extends string>(fname: string, args: unknown[], i: number, options: readonly T[]): T {
  const t = textOf(args[i]);
  if (t === null || !options.includes(t as T)) badArg(fname, i, options.map((o) => `'${o}'`).join(" | "), args[i]);
  return t as T;
}
