// Code generation for the common SELECT statement (no field stored below a top-level name, see
// compile.ts): one JavaScript function per rule, made once when the rule is compiled. Each rule
// then has its own compiled code and its own inline caches, so reading `topic` from a publish
// event is a monomorphic property load instead of a frame walk shared, and made megamorphic, by
// every rule of the node.
//
// Semantics are those of the closures in compile.ts (which also validate the statement first):
// - A column read is `ctx[name]`, an earlier alias its local (the literal form: the row is one
//   object literal made after WHERE) or `out[name]` (the stepwise form, for `*` among fields and
//   for anything needing the frame: the output row holds the aliases); names that Object.prototype also has go through the frame
//   (`f.get`, own properties only), as do expressions this generator leaves to a closure
//   (dynamic path steps `a[x]`, CASE).
// - A function that reads its environment receives the frame above the shared root (aliases,
//   then columns); the others receive the root frame, which they ignore.
// - `SELECT *` without other fields answers the event's columns object itself (rows are read-only).
// - The generated source holds no SQL text: names are JSON string literals, every value (constants,
//   functions, closures) is passed in arrays and referenced by index.

import { matchTopic } from "../../mqtt/topic.ts";
import type { CompareOp, Expr, Field, Statement } from "../sql/ast.ts";
import { lookupFunction } from "./functions/index.ts";
import { add, compare, divide, intDiv, mul, negate, sub } from "./operators.ts";
import { getPath, rangeGet, type Step } from "./paths.ts";
import { Frame } from "./scope.ts";
import { type Row, setOwn, termEqual } from "./values.ts";

/** An expression compiled to a closure over the frame (compile.ts). */
export type Ev = (f: Frame) => unknown;

export interface SelectParts {
  readonly stmt: Statement;
  /** compile.ts's closure for an expression (the fallback for what is not generated). */
  readonly closure: (e: Expr) => Ev;
  /** The key an unaliased field's value goes to (compile.ts's implicit target). */
  readonly target: (x: Field & { kind: "expr" }, position: number) => string;
  readonly wrap: (e: unknown) => Error;
}

/** Helpers the generated code calls (one object, passed in). */
const H = {
  Frame,
  getPath,
  rangeGet,
  compare,
  add,
  sub,
  mul,
  divide,
  intDiv,
  negate,
  setOwn,
  /** A `*` after other fields: the columns the row lacks (a name it holds is an earlier alias), in order. */
  addMissing(out: Row, cols: Row): void {
    for (const k in cols) if (Object.hasOwn(cols, k) && !Object.hasOwn(out, k)) setOwn(out, k, cols[k]);
  },
  not: (v: unknown): boolean => (typeof v === "boolean" ? !v : false),
  // Comparisons with a constant: the common operand type answered inline, anything else by
  // compare() (which gives the same answer for the inline cases).
  /** `x = 'text'`: two strings are equal when identical. */
  eqText: (x: unknown, text: string): boolean => (typeof x === "string" ? x === text : compare("=", x, text)),
  /** `x =~ 'filter'`: a topic string matched directly. */
  matchText: (x: unknown, filter: string): boolean =>
    typeof x === "string" ? matchTopic(filter, x) : compare("=~", x, filter),
  eqNum: (x: unknown, n: number): boolean => (typeof x === "number" ? x === n : compare("=", x, n)),
  ltNum: (x: unknown, n: number): boolean => (typeof x === "number" ? x < n : compare("<", x, n)),
  gtNum: (x: unknown, n: number): boolean => (typeof x === "number" ? x > n : compare(">", x, n)),
  leNum: (x: unknown, n: number): boolean => (typeof x === "number" ? x <= n : compare("<=", x, n)),
  geNum: (x: unknown, n: number): boolean => (typeof x === "number" ? x >= n : compare(">=", x, n)),
  inList(x: unknown, items: unknown[], negated: boolean): boolean {
    let found = false;
    for (const i of items) if (termEqual(x, i)) found = true;
    return negated ? !found : found;
  },
};

const ARITH: Record<string, string> = { "+": "add", "-": "sub", "*": "mul", "/": "divide", div: "intDiv" };
/** Comparisons with a constant number on the right: the helper, and whether its answer is negated. */
const NUM_CMP: Partial<Record<CompareOp, [string, boolean]>> = {
  "=": ["eqNum", false],
  "!=": ["eqNum", true],
  "<>": ["eqNum", true],
  "<": ["ltNum", false],
  ">": ["gtNum", false],
  "<=": ["leNum", false],
  ">=": ["geNum", false],
};

class Gen {
  readonly consts: unknown[] = [];
  readonly closures: unknown[] = [];
  /** Names the output row holds at the point being generated (aliases so far). */
  aliases = new Set<string>();
  /** In the literal form (see generateSelect): the local holding each alias's latest value. */
  locals: Map<string, string> | null = null;
  /** Whether the frame `f` is used (calls, closures). */
  needsFrame = false;

  constructor(private readonly parts: SelectParts) {}

  k(v: unknown): string {
    this.consts.push(v);
    return `K[${this.consts.length - 1}]`;
  }

  closure(fn: unknown): string {
    this.closures.push(fn);
    this.needsFrame = true;
    return `E[${this.closures.length - 1}]`;
  }

  read(name: string): string {
    if (name in Object.prototype) {
      this.needsFrame = true;
      return `f.get(${JSON.stringify(name)})`;
    }
    const local = this.locals?.get(name);
    if (local !== undefined) return local;
    return `${this.aliases.has(name) ? "out" : "ctx"}[${JSON.stringify(name)}]`;
  }

  expr(e: Expr): string {
    switch (e.kind) {
      case "const":
        return this.k(e.value);
      case "var":
        return this.read(e.name);
      case "path": {
        if (e.segs.some((s) => s.kind === "indexExpr")) return `${this.closure(this.parts.closure(e))}(f)`;
        const steps: Step[] = e.segs.map((s) =>
          s.kind === "key" ? s.key : s.kind === "index" && typeof s.index === "number" ? s.index : null,
        );
        if (e.segs.some((s) => s.kind === "index" && typeof s.index !== "number")) {
          return `${this.closure(this.parts.closure(e))}(f)`;
        }
        const base =
          e.base.kind === "var" && e.base.name === "payload"
            ? `root.decode(${this.read("payload")})`
            : this.expr(e.base);
        return `H.getPath(${base}, ${this.k(steps)})`;
      }
      case "slice":
        return `H.rangeGet(${e.from}, ${e.to}, ${this.expr(e.base)})`;
      case "range":
      case "case":
        return `${this.closure(this.parts.closure(e))}(f)`;
      case "list":
        return `[${e.items.map((i) => this.expr(i)).join(", ")}]`;
      case "call": {
        const def = lookupFunction(e.name);
        if (def === undefined) return `${this.closure(this.parts.closure(e))}(f)`;
        const fn = this.k(def.call);
        // Only a function that reads its environment needs the frame that sees the aliases.
        if (def.env === true) this.needsFrame = true;
        return `${fn}([${e.args.map((a) => this.expr(a)).join(", ")}], ${def.env === true ? "f" : "root"})`;
      }
      case "neg":
        if (e.operand.kind === "const" && typeof e.operand.value === "number") return this.k(-e.operand.value + 0);
        return `H.negate(${this.expr(e.operand)})`;
      case "plus":
        return this.expr(e.operand);
      case "not":
        return `H.not(${this.expr(e.operand)})`;
      case "arith":
        return `H.${ARITH[e.op]}(${this.expr(e.left)}, ${this.expr(e.right)})`;
      case "compare": {
        const c = e.right.kind === "const" ? e.right.value : undefined;
        if (typeof c === "string" && (e.op === "=" || e.op === "!=" || e.op === "<>")) {
          const eq = `H.eqText(${this.expr(e.left)}, ${this.k(c)})`;
          return e.op === "=" ? eq : `!${eq}`;
        }
        if (typeof c === "string" && e.op === "=~") return `H.matchText(${this.expr(e.left)}, ${this.k(c)})`;
        const num = typeof c === "number" ? NUM_CMP[e.op] : undefined;
        if (num !== undefined) {
          const call = `H.${num[0]}(${this.expr(e.left)}, ${this.k(c)})`;
          return num[1] ? `!${call}` : call;
        }
        return `H.compare(${JSON.stringify(e.op satisfies CompareOp)}, ${this.expr(e.left)}, ${this.expr(e.right)})`;
      }
      case "and":
        return `(${this.expr(e.left)} === true && ${this.expr(e.right)} === true)`;
      case "or":
        return `(${this.expr(e.left)} === true || ${this.expr(e.right)} === true)`;
      case "in":
        return `H.inList(${this.expr(e.value)}, [${e.list.map((i) => this.expr(i)).join(", ")}], ${e.negated})`;
    }
  }
}

/**
 * The evaluation of a SELECT statement whose fields store only top-level names, as one generated
 * function of the event's root frame: its row, or null when WHERE rejects.
 */
export function generateSelect(parts: SelectParts): (root: Frame) => Row | null {
  return literalSelect(parts) ?? stepwiseSelect(parts);
}

/**
 * The literal form, for fields that are all expressions, none named `__proto__`, none needing the
 * frame: each value into a local, WHERE on the locals, and only then the row as one object
 * literal (one allocation of a fixed shape, none when WHERE rejects). Null when it does not apply.
 */
function literalSelect(parts: SelectParts): ((root: Frame) => Row | null) | null {
  const { stmt } = parts;
  if (stmt.fields.length === 0) return null;
  const g = new Gen(parts);
  const locals = new Map<string, string>();
  g.locals = locals;
  const body: string[] = [];
  for (let i = 0; i < stmt.fields.length; i++) {
    const x = stmt.fields[i];
    if (x.kind === "all") return null;
    const name = parts.target(x, i + 1);
    if (name === "__proto__") return null;
    body.push(`const v${i} = ${g.expr(x.expr)};`);
    // A name given twice keeps its first place and takes its last value, as assignments do.
    locals.set(name, `v${i}`);
  }
  if (stmt.where !== null) body.push(`if (${g.expr(stmt.where)} !== true) return null;`);
  if (g.needsFrame) return null;
  const entries = [...locals].map(([name, local]) => `${JSON.stringify(name)}: ${local}`);
  body.push(`return { ${entries.join(", ")} };`);
  return compiled(g, parts, "", body, "");
}

/** The general form: the row built field by field, aliases read back from it. */
function stepwiseSelect(parts: SelectParts): (root: Frame) => Row | null {
  const { stmt } = parts;
  const g = new Gen(parts);
  const leadingAll = stmt.fields.length > 0 && stmt.fields[0].kind === "all";
  // `SELECT *` alone: the row is the event's columns, not a copy (rows are read-only).
  const onlyAll = leadingAll && stmt.fields.length === 1;
  const body: string[] = [];
  stmt.fields.forEach((x, i) => {
    if (x.kind === "all") {
      if (i > 0) body.push("H.addMissing(out, ctx);");
      return;
    }
    const name = parts.target(x, i + 1);
    const value = g.expr(x.expr);
    body.push(
      name === "__proto__" ? `H.setOwn(out, "__proto__", ${value});` : `out[${JSON.stringify(name)}] = ${value};`,
    );
    g.aliases.add(name);
  });
  if (stmt.where !== null) body.push(`if (${g.expr(stmt.where)} !== true) return null;`);
  const head = [
    `const out = ${onlyAll ? "ctx" : leadingAll ? "{ ...ctx }" : "{}"};`,
    g.needsFrame ? "const f = new H.Frame(out, root);" : "",
  ].join("\n  ");
  return compiled(g, parts, head, body, "return out;");
}

/** The generated function: `head`, then `body` with errors wrapped, then `tail`. */
function compiled(g: Gen, parts: SelectParts, head: string, body: string[], tail: string): (root: Frame) => Row | null {
  const src = [
    '"use strict";',
    "return function evaluate(root) {",
    "  const ctx = root.vars;",
    `  ${head}`,
    "  try {",
    ...body.map((l) => `    ${l}`),
    "  } catch (e) {",
    "    throw wrap(e);",
    "  }",
    `  ${tail}`,
    "};",
  ].join("\n");
  return new Function("H", "K", "E", "wrap", src)(H, g.consts, g.closures, parts.wrap);
}
