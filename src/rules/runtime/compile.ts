// The rule compiler: parses a statement once and turns its AST into closures, so evaluating an
// event walks no tree and parses nothing; the common SELECT form is then generated as one
// function per rule (codegen.ts). `compileRule(sql)` gives a CompiledRule with the
// normalized FROM sources and `evaluate(ctx)`.
//
// Evaluation (emqx-facts 1.1):
// - SELECT: each field is evaluated in order against the event's columns plus the fields
//   before it; its value goes into the output row AND into that context, so later fields and
//   WHERE see it. `*` copies every column (and earlier aliases). An unaliased variable or path
//   keeps its name (`payload.x` outputs {payload: {x}}), an unaliased string literal is its own
//   key, other unaliased values get a hidden key `_v_<kind>_<position>`. Then WHERE; a result
//   other than `true` rejects the event.
// - FOREACH: the fields are evaluated as for SELECT; the last must give a list (anything else
//   counts as empty), bound per element to `item` or to the last field's alias. WHERE runs
//   once, before iterating; INCASE filters each element; DO computes each output row (without
//   DO the row is the whole context plus the element).
// - evaluate returns null when WHERE/INCASE rejects or FOREACH has no element left (the
//   family's no_result, "SQL Not Match"), else the rows. Failures throw RuleEvalError.
// - `payload.x` decodes a JSON payload on first use (cached for the evaluation); a payload
//   that is not JSON is a RuleEvalError.
// - Conditions (WHERE, INCASE, WHEN, AND, OR, NOT) treat any non-boolean as false.
//
// FROM: `"$events/<name>"` and 3.x event names and aliases become event keys (event-names.ts);
// anything else must be a valid topic filter (message.publish of matching topics).

import { validateTopicFilter } from "../../mqtt/topic.ts";
import { type EventKey, eventsOfSource } from "../event-names.ts";
import type { AliasPath, Expr, Field, PathSeg, Pos, Statement } from "../sql/ast.ts";
import { SqlError } from "../sql/errors.ts";
import { parseSql } from "../sql/parser.ts";
import { type Ev, generateSelect } from "./codegen.ts";
import { RuleEvalError } from "./errors.ts";
import { acceptsArity, arityText, lookupFunction } from "./functions/index.ts";
import { add, compare, divide, intDiv, mul, negate, sub } from "./operators.ts";
import { getPath, HEAD, putPath, rangeGen, rangeGet, type Step, TAIL } from "./paths.ts";
import { Frame } from "./scope.ts";
import { getOwn, type Row, setOwn, termEqual } from "./values.ts";

/** The FROM clause, normalized. */
export interface RuleSources {
  /** MQTT topic filters: the rule fires on message.publish of a matching topic. */
  readonly topics: readonly string[];
  /** Event keys (`client.connected`...), whichever dialect named them. */
  readonly events: readonly EventKey[];
  /** The FROM entries as written. */
  readonly raw: readonly string[];
}

export interface CompiledRule {
  readonly sql: string;
  readonly sources: RuleSources;
  readonly isForeach: boolean;
  /**
   * Evaluates the rule against one event's columns (`ctx` is not modified). Returns the output
   * rows (one for SELECT, one per surviving element for FOREACH), or null when WHERE/INCASE
   * rejects or no element is left. Throws RuleEvalError when evaluation fails.
   */
  evaluate(ctx: Record<string, unknown>): Record<string, unknown>[] | null;
  /**
   * evaluate() over an event's root frame (`new Frame(ctx, null)`), which rules of the same event
   * may share: the payload is then JSON-decoded once for all of them. Clear `root.dict` between
   * rules (proc_dict_* is per evaluation).
   */
  evaluateIn(root: Frame): Record<string, unknown>[] | null;
  /**
   * A SELECT statement's one row over a root frame (as evaluateIn, without the array), or null;
   * null as a function for FOREACH statements.
   */
  readonly selectIn: ((root: Frame) => Record<string, unknown> | null) | null;
}

type FieldFn = (f: Frame, out: Row) => void;
/** A path step known at compile time, or evaluated per event (`a[x]`). */
type StepSrc = Step | ((f: Frame) => Step);

function err(reason: string, pos: Pos): never {
  throw new SqlError(reason, pos.line, pos.column);
}

function asIndex(v: unknown): Step {
  return typeof v === "number" && Number.isInteger(v) ? v : null;
}

function compileSteps(segs: readonly PathSeg[]): { steps: StepSrc[]; dynamic: boolean } {
  let dynamic = false;
  const steps = segs.map((s): StepSrc => {
    if (s.kind === "key") return s.key;
    if (s.kind === "index") return s.index === "head" ? HEAD : s.index === "tail" ? TAIL : s.index;
    dynamic = true;
    const ev = compileExpr(s.expr);
    return (f: Frame) => asIndex(ev(f));
  });
  return { steps, dynamic };
}

/** Resolves the steps for this evaluation (only when some are dynamic). */
function resolver(src: { steps: StepSrc[]; dynamic: boolean }): (f: Frame) => Step[] {
  if (!src.dynamic) {
    const fixed = src.steps as Step[];
    return () => fixed;
  }
  const steps = src.steps;
  return (f) => steps.map((s) => (typeof s === "function" ? s(f) : s));
}

function isTrue(v: unknown): boolean {
  return v === true;
}

function compileExpr(e: Expr): Ev {
  switch (e.kind) {
    case "const": {
      const v = e.value;
      return () => v;
    }
    case "var": {
      const name = e.name;
      return (f) => f.get(name);
    }
    case "path": {
      const steps = resolver(compileSteps(e.segs));
      if (e.base.kind === "var" && e.base.name === "payload") {
        return (f) => getPath(f.payload(), steps(f));
      }
      const base = compileExpr(e.base);
      return (f) => getPath(base(f), steps(f));
    }
    case "slice": {
      if (e.from === 0 || e.to === 0) err("slice indexes start at 1 (0 is not an index)", e.pos);
      const base = compileExpr(e.base);
      const { from, to } = e;
      return (f) => rangeGet(from, to, base(f));
    }
    case "range": {
      let list: number[];
      try {
        list = rangeGen(e.from, e.to);
      } catch (x) {
        return err((x as Error).message, e.pos);
      }
      return () => list.slice();
    }
    case "list": {
      const items = e.items.map(compileExpr);
      return (f) => items.map((i) => i(f));
    }
    case "call":
      return compileCall(e.name, e.args, e.pos);
    case "neg": {
      if (e.operand.kind === "const" && typeof e.operand.value === "number") {
        const v = -e.operand.value + 0;
        return () => v;
      }
      const op = compileExpr(e.operand);
      return (f) => negate(op(f));
    }
    case "plus":
      return compileExpr(e.operand);
    case "not": {
      const op = compileExpr(e.operand);
      return (f) => {
        const v = op(f);
        return typeof v === "boolean" ? !v : false;
      };
    }
    case "arith": {
      const l = compileExpr(e.left);
      const r = compileExpr(e.right);
      switch (e.op) {
        case "+":
          return (f) => add(l(f), r(f));
        case "-":
          return (f) => sub(l(f), r(f));
        case "*":
          return (f) => mul(l(f), r(f));
        case "/":
          return (f) => divide(l(f), r(f));
        default:
          return (f) => intDiv(l(f), r(f));
      }
    }
    case "compare": {
      const l = compileExpr(e.left);
      const r = compileExpr(e.right);
      const op = e.op;
      return (f) => compare(op, l(f), r(f));
    }
    case "and": {
      const l = compileExpr(e.left);
      const r = compileExpr(e.right);
      return (f) => isTrue(l(f)) && isTrue(r(f));
    }
    case "or": {
      const l = compileExpr(e.left);
      const r = compileExpr(e.right);
      return (f) => isTrue(l(f)) || isTrue(r(f));
    }
    case "in": {
      const v = compileExpr(e.value);
      const items = e.list.map(compileExpr);
      const negated = e.negated;
      return (f) => {
        const x = v(f);
        let found = false;
        for (const i of items) if (termEqual(x, i(f))) found = true;
        return negated ? !found : found;
      };
    }
    case "case": {
      const whens = e.whens.map((w) => ({ when: compileExpr(w.when), result: compileExpr(w.result) }));
      const otherwise = e.otherwise === null ? null : compileExpr(e.otherwise);
      if (e.subject === null) {
        return (f) => {
          for (const w of whens) if (isTrue(w.when(f))) return w.result(f);
          return otherwise === null ? undefined : otherwise(f);
        };
      }
      const subject = compileExpr(e.subject);
      return (f) => {
        const s = subject(f);
        for (const w of whens) if (termEqual(s, w.when(f))) return w.result(f);
        return otherwise === null ? undefined : otherwise(f);
      };
    }
  }
}

function compileCall(name: string, argExprs: readonly Expr[], pos: Pos): Ev {
  const def = lookupFunction(name);
  if (def === undefined) err(`sql_function_not_supported: ${name}`, pos);
  if (!acceptsArity(def, argExprs.length)) {
    err(`sql_function_arity_error: ${name} takes ${arityText(def)} argument(s), got ${argExprs.length}`, pos);
  }
  const args = argExprs.map(compileExpr);
  const call = def.call;
  switch (args.length) {
    case 0:
      return (f) => call([], f);
    case 1: {
      const [a] = args;
      return (f) => call([a(f)], f);
    }
    case 2: {
      const [a, b] = args;
      return (f) => call([a(f), b(f)], f);
    }
    default:
      return (f) =>
        call(
          args.map((a) => a(f)),
          f,
        );
  }
}

/** Where a field's value is stored: a top-level name and path steps below it. */
interface Target {
  readonly name: string;
  readonly steps: (f: Frame) => Step[];
  readonly deep: boolean;
}

function aliasTarget(a: AliasPath): Target {
  return { name: a.name, steps: resolver(compileSteps(a.segs)), deep: a.segs.length > 0 };
}

/** The implicit key of an unaliased field (the family's alias/1). */
function implicitTarget(e: Expr, position: number): Target {
  const none: Target = { name: "", steps: () => [], deep: false };
  const target = (x: Expr): Target | null => {
    if (x.kind === "var") return { ...none, name: x.name };
    if (x.kind === "path" && x.base.kind === "var") {
      return { name: x.base.name, steps: resolver(compileSteps(x.segs)), deep: true };
    }
    if (x.kind === "slice") return target(x.base);
    if (x.kind === "const" && typeof x.value === "string") return { ...none, name: x.value };
    return null;
  };
  const t = target(e);
  if (t !== null) return t;
  let kind: string = e.kind;
  if (e.kind === "call") kind = `fun_${e.name}`;
  else if (e.kind === "arith" || e.kind === "compare" || e.kind === "and" || e.kind === "or") kind = "op";
  else if (e.kind === "in" || e.kind === "not" || e.kind === "neg" || e.kind === "plus") kind = "op";
  return { ...none, name: `_v_${kind}_${position}` };
}

/** Stores v at the target in the context frame and in the output row. */
function store(f: Frame, out: Row, t: Target, v: unknown): void {
  if (!t.deep) {
    f.set(t.name, v);
    setOwn(out, t.name, v);
    return;
  }
  const steps = t.steps(f);
  let cur = f.get(t.name);
  if (t.name === "payload") cur = f.decode(cur);
  f.set(t.name, putPath(cur, steps, 0, v));
  setOwn(out, t.name, putPath(getOwn(out, t.name), steps, 0, v));
}

function fieldTarget(field: Field & { kind: "expr" }, position: number): Target {
  return field.alias !== null ? aliasTarget(field.alias) : implicitTarget(field.expr, position);
}

function compileField(field: Field, position: number): FieldFn {
  if (field.kind === "all") return (f, out) => void f.collect(out);
  const ev = compileExpr(field.expr);
  const t = fieldTarget(field, position);
  return (f, out) => store(f, out, t, ev(f));
}

function compileFields(fields: readonly Field[]): FieldFn[] {
  return fields.map((x, i) => compileField(x, i + 1));
}

function runFields(fields: FieldFn[], f: Frame, out: Row, from = 0): void {
  for (let i = from; i < fields.length; i++) fields[i](f, out);
}

/** Fields compiled for a new output row: a leading `*` copies the visible columns at once. */
interface FieldList {
  readonly fns: FieldFn[];
  readonly leadingAll: boolean;
}

function compileFieldList(fields: readonly Field[]): FieldList {
  return { fns: compileFields(fields), leadingAll: fields.length > 0 && fields[0].kind === "all" };
}

/** runFields into a new row (the same row `{}` plus the fields would give). */
function runFieldsNew(fields: FieldList, f: Frame): Row {
  if (!fields.leadingAll) {
    const out: Row = {};
    runFields(fields.fns, f, out);
    return out;
  }
  const out = f.collectNew();
  runFields(fields.fns, f, out, 1);
  return out;
}

function compileSources(stmt: Statement): RuleSources {
  const topics: string[] = [];
  const events: EventKey[] = [];
  for (const src of stmt.from) {
    const ev = eventsOfSource(src.name);
    if (ev === null) {
      if (src.name.startsWith("$share/") || src.name.startsWith("$queue/")) {
        err(`a shared subscription cannot be a rule source: ${src.name}`, src.pos);
      }
      if (!validateTopicFilter(src.name, 0)) err(`invalid topic filter: ${src.name}`, src.pos);
      if (!topics.includes(src.name)) topics.push(src.name);
    } else if (ev.length === 0) {
      err(`unknown event: ${src.name}`, src.pos);
    } else {
      for (const k of ev) if (!events.includes(k)) events.push(k);
    }
  }
  return { topics, events, raw: stmt.from.map((s) => s.name) };
}

function wrap(e: unknown): RuleEvalError {
  if (e instanceof RuleEvalError) return e;
  return new RuleEvalError(`internal_error: ${e instanceof Error ? e.message : String(e)}`);
}

/** Whether a field stores below a top-level name (fieldTarget(...).deep, from the AST alone). */
function storesDeep(field: Field): boolean {
  if (field.kind === "all") return false;
  if (field.alias !== null) return field.alias.segs.length > 0;
  let x = field.expr;
  while (x.kind === "slice") x = x.base;
  return x.kind === "path" && x.base.kind === "var";
}

function compileSelect(stmt: Statement): (root: Frame) => Row | null {
  const where = stmt.where === null ? null : compileExpr(stmt.where);
  if (!stmt.fields.some(storesDeep)) {
    // The evaluation is generated (codegen.ts); compiling the fields' closures first validates
    // the statement (compile errors with positions).
    for (const x of stmt.fields) if (x.kind === "expr") compileExpr(x.expr);
    return generateSelect({
      stmt,
      closure: compileExpr,
      target: (x, position) => fieldTarget(x, position).name,
      wrap,
    });
  }
  const fields = compileFieldList(stmt.fields);
  return (root) => {
    const f = new Frame({}, root);
    let out: Row;
    try {
      out = runFieldsNew(fields, f);
      if (where !== null && !isTrue(where(f))) return null;
    } catch (e) {
      throw wrap(e);
    }
    return out;
  };
}

function compileForeach(stmt: Statement): (root: Frame) => Row[] | null {
  const last = stmt.fields[stmt.fields.length - 1];
  if (last.kind === "all") err("the last FOREACH field must be an expression giving a list, not *", last.pos);
  const head = compileFieldList(stmt.fields.slice(0, -1));
  const collEv = compileExpr(last.expr);
  const t = fieldTarget(last, stmt.fields.length);
  const itemKey = last.alias !== null && last.alias.segs.length === 0 ? last.alias.name : "item";
  const doFields = stmt.doFields === null ? null : compileFieldList(stmt.doFields);
  const incase = stmt.incase === null ? null : compileExpr(stmt.incase);
  const where = stmt.where === null ? null : compileExpr(stmt.where);
  return (root) => {
    const f = new Frame({}, root);
    const rows: Row[] = [];
    try {
      const selected = runFieldsNew(head, f);
      const list = collEv(f);
      store(f, selected, t, list);
      if (where !== null && !isTrue(where(f))) return null;
      if (!Array.isArray(list)) return null;
      for (const item of list) {
        const vars: Row = {};
        setOwn(vars, itemKey, item);
        const itemFrame = new Frame(vars, f);
        if (incase !== null && !isTrue(incase(itemFrame))) continue;
        if (doFields === null) rows.push(itemFrame.collectNew());
        else rows.push(runFieldsNew(doFields, new Frame({}, itemFrame)));
      }
    } catch (e) {
      throw wrap(e);
    }
    return rows.length > 0 ? rows : null;
  };
}

/** Parses and compiles a rule statement. Throws SqlError. */
export function compileRule(sql: string): CompiledRule {
  const stmt = parseSql(sql);
  const sources = compileSources(stmt);
  const isForeach = stmt.kind === "foreach";
  const selectIn = isForeach ? null : compileSelect(stmt);
  const evaluateIn =
    selectIn === null
      ? compileForeach(stmt)
      : (root: Frame) => {
          const row = selectIn(root);
          return row === null ? null : [row];
        };
  return { sql, sources, isForeach, evaluateIn, selectIn, evaluate: (ctx) => evaluateIn(new Frame(ctx, null)) };
}
