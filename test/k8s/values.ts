// The chart's values as helm sees them: values.yaml with overrides merged over it (maps merge,
// null removes a key, anything else replaces), and values.schema.json checking the result.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { parse } from "yaml";
import { CHART } from "./render.ts";

type Values = Record<string, unknown>;
const isMap = (v: unknown): v is Values => typeof v === "object" && v !== null && !Array.isArray(v);

export function mergeValues(base: Values, over: Values): Values {
  const out: Values = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === null) delete out[k];
    else if (isMap(v) && isMap(out[k])) out[k] = mergeValues(out[k] as Values, v);
    else out[k] = v;
  }
  return out;
}

export const defaultValues = (): Values => parse(readFileSync(join(CHART, "values.yaml"), "utf8")) as Values;

const schema = JSON.parse(readFileSync(join(CHART, "values.schema.json"), "utf8"));
const check = new Ajv({ allErrors: true, allowUnionTypes: true }).compile(schema);

/** The schema's complaints about values.yaml + overrides ([] when valid). */
export function schemaErrors(overrides: Values): string[] {
  if (check(mergeValues(defaultValues(), overrides))) return [];
  return (check.errors ?? []).map((e) => `${e.instancePath || "/"} ${e.message ?? ""}`.trim());
}
