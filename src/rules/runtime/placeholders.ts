// `${name}` / `${a.b.c}` templates, rendered against a rule's selected row (republish
// payload_tmpl and topic, web hook path and body...). A path reads maps (JSON text met on the
// way is decoded, as in SQL paths). Rendering: text as is, numbers as SQL prints them,
// booleans true/false, maps and lists as JSON, a missing value as `undefined`, a JSON null as
// `null`. `${` without a closing `}` stays literal text. Templates are compiled once.

import { getPath } from "./paths.ts";
import { jsonEncode, numberToText, type Row, textOf } from "./values.ts";

/** A compiled template. */
export type Template = (data: Row) => string;

type Part = string | readonly string[];

function parse(tmpl: string): Part[] {
  const parts: Part[] = [];
  let lit = "";
  let i = 0;
  while (i < tmpl.length) {
    const open = tmpl.indexOf("${", i);
    if (open < 0) break;
    const close = tmpl.indexOf("}", open + 2);
    if (close < 0) break;
    lit += tmpl.slice(i, open);
    const name = tmpl.slice(open + 2, close).trim();
    if (name === "") lit += tmpl.slice(open, close + 1);
    else {
      if (lit !== "") parts.push(lit);
      lit = "";
      parts.push(name.split("."));
    }
    i = close + 1;
  }
  lit += tmpl.slice(i);
  if (lit !== "") parts.push(lit);
  return parts;
}

/** How one value is written into a template. */
export function renderValue(v: unknown): string {
  if (v === undefined) return "undefined";
  if (v === null) return "null";
  const t = textOf(v);
  if (t !== null) return t;
  if (typeof v === "number") return numberToText(v);
  if (typeof v === "boolean") return v ? "true" : "false";
  if (v instanceof Date) return v.toISOString();
  return jsonEncode(v);
}

/** Compiles a template once for many renderings. */
export function compileTemplate(tmpl: string): Template {
  const parts = parse(tmpl);
  if (parts.length === 0) return () => "";
  if (parts.length === 1 && typeof parts[0] === "string") {
    const s = parts[0];
    return () => s;
  }
  return (data) => {
    let out = "";
    for (const p of parts) out += typeof p === "string" ? p : renderValue(getPath(data, p));
    return out;
  };
}

/** Renders a template against a selected row. */
export function renderTemplate(tmpl: string, data: Row): string {
  return compileTemplate(tmpl)(data);
}

/** The placeholder paths a template uses (`${a.b}` gives "a.b"). */
export function templateVars(tmpl: string): string[] {
  return parse(tmpl)
    .filter((p): p is readonly string[] => typeof p !== "string")
    .map((p) => p.join("."));
}
