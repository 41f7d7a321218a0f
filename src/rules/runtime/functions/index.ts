// The SQL function library: every category's table merged into one registry, looked up by the
// compiler (names are case-insensitive). Unknown names and wrong arities are compile errors
// there; the enterprise-only schema_decode/schema_encode are not provided.

import { arrayFunctions } from "./arrays.ts";
import { bitFunctions } from "./bits.ts";
import { checkFunctions } from "./checks.ts";
import { codecFunctions } from "./codec.ts";
import { compressFunctions } from "./compress.ts";
import { contextFunctions } from "./context.ts";
import { convertFunctions } from "./convert.ts";
import { hashFunctions } from "./hash.ts";
import { mapFunctions } from "./maps.ts";
import { mathFunctions } from "./math.ts";
import { miscFunctions } from "./misc.ts";
import { operatorFunctions } from "./operators.ts";
import { stringFunctions } from "./strings.ts";
import { timeFunctions } from "./time.ts";
import { topicFunctions } from "./topic.ts";
import type { FnDef } from "./types.ts";

const registry = new Map<string, FnDef>();
for (const table of [
  contextFunctions,
  operatorFunctions,
  mathFunctions,
  bitFunctions,
  convertFunctions,
  checkFunctions,
  stringFunctions,
  mapFunctions,
  arrayFunctions,
  hashFunctions,
  compressFunctions,
  codecFunctions,
  timeFunctions,
  topicFunctions,
  miscFunctions,
]) {
  for (const [name, def] of Object.entries(table)) {
    if (registry.has(name)) throw new Error(`duplicate SQL function ${name}`);
    registry.set(name, def);
  }
}

/** The function named `name` (any case), undefined when there is none. */
export function lookupFunction(name: string): FnDef | undefined {
  return registry.get(name.toLowerCase());
}

/** Every function name, sorted. */
export function functionNames(): string[] {
  return [...registry.keys()].sort();
}

/** True when `def` accepts `n` arguments. */
export function acceptsArity(def: FnDef, n: number): boolean {
  return Array.isArray(def.arity) ? def.arity.includes(n) : n >= (def.arity as { min: number }).min;
}

/** The accepted arities in words, for error messages ("1 or 2", "at least 1"). */
export function arityText(def: FnDef): string {
  if (!Array.isArray(def.arity)) return `at least ${(def.arity as { min: number }).min}`;
  const a = def.arity as readonly number[];
  return a.length === 1 ? String(a[0]) : `${a.slice(0, -1).join(", ")} or ${a[a.length - 1]}`;
}
