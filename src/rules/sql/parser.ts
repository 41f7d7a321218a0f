// Rule SQL parser: hand-written recursive descent over the lexer's tokens, producing the AST of
// ast.ts. Grammar (emqx-facts 1.1, the rulesql grammar of the 4.x family, accepting 3.x FROM):
//
//   sql     := SELECT fields FROM sources [WHERE expr]
//            | FOREACH fields [DO fields] [INCASE expr] FROM sources [WHERE expr]
//   fields  := field {, field}          field := '*' | expr [[AS] alias-path]
//   sources := name {, name}            (double-quoted topic filters or event names)
//   expr    := or;  or := and {OR and};  and := not {AND not};  not := NOT not | cmp
//   cmp     := add [(= != <> < > <= >= =~ ~=) add | [NOT] IN '(' expr {, expr} ')']
//   add     := mul {(+|-) mul};  mul := unary {(*|/|DIV) unary};  unary := (+|-) unary | postfix
//   postfix := primary {'.' key | '[' index ']' | RANGE}
//   primary := number | 'string' | TRUE | FALSE | name | name '(' [expr {, expr}] ')'
//            | '(' expr ')' | CASE-expr | '[' [expr {, expr}] ']' | RANGE
//
// Comparison is non-associative (`a = b = c` is an error). The grammar is a superset of rulesql
// where that costs nothing (CASE and paths anywhere an expression goes, any expression in an
// index or a list). Errors are SqlErrors pointing at the offending token. `parseCount()` counts
// parses so tests can prove that compiled rules never parse again.

import type { AliasPath, CompareOp, Expr, Field, PathSeg, Pos, Source, Statement } from "./ast.ts";
import { SqlError } from "./errors.ts";
import { describeToken, type Token, tokenize } from "./lexer.ts";

let parses = 0;

/** How many statements parseSql has parsed since the process started. */
export function parseCount(): number {
  return parses;
}

const COMPARE_OPS: ReadonlySet<string> = new Set(["=", "!=", "<>", "<", ">", "<=", ">=", "=~", "~="]);

/** Parses one rule SQL statement. Throws SqlError. */
export function parseSql(sql: string): Statement {
  parses++;
  if (sql.trim() === "") throw new SqlError("empty SQL statement", 1, 1);
  return new Parser(tokenize(sql)).statement();
}

class Parser {
  private i = 0;
  private readonly toks: Token[];

  constructor(toks: Token[]) {
    this.toks = toks;
  }

  private peek(k = 0): Token {
    const j = this.i + k;
    return this.toks[j < this.toks.length ? j : this.toks.length - 1];
  }

  private next(): Token {
    const t = this.toks[this.i];
    if (t.kind !== "eof") this.i++;
    return t;
  }

  private isKw(word: string, t: Token = this.peek()): boolean {
    return t.kind === "keyword" && t.text === word;
  }

  private isOp(sym: string, t: Token = this.peek()): boolean {
    return t.kind === "op" && t.text === sym;
  }

  private fail(reason: string, t: Token = this.peek()): never {
    throw new SqlError(reason, t.line, t.column);
  }

  private expectKw(word: string): Token {
    if (!this.isKw(word)) this.fail(`expected ${word}`);
    return this.next();
  }

  private expectOp(sym: string): Token {
    if (!this.isOp(sym)) this.fail(`expected '${sym}'`);
    return this.next();
  }

  private static pos(t: Token): Pos {
    return { line: t.line, column: t.column };
  }

  statement(): Statement {
    const t = this.peek();
    let stmt: Statement;
    if (this.isKw("SELECT")) {
      this.next();
      const fields = this.fieldList();
      this.expectKw("FROM");
      const from = this.sources();
      const where = this.optWhere();
      stmt = { kind: "select", fields, doFields: null, incase: null, from, where };
    } else if (this.isKw("FOREACH")) {
      this.next();
      const fields = this.fieldList();
      let doFields: Field[] | null = null;
      let incase: Expr | null = null;
      if (this.isKw("DO")) {
        this.next();
        doFields = this.fieldList();
      }
      if (this.isKw("INCASE")) {
        this.next();
        incase = this.expr();
      }
      if (!this.isKw("FROM"))
        this.fail(doFields === null && incase === null ? "expected DO, INCASE or FROM" : "expected FROM");
      this.next();
      const from = this.sources();
      const where = this.optWhere();
      stmt = { kind: "foreach", fields, doFields, incase, from, where };
    } else {
      return this.fail("expected SELECT or FOREACH", t);
    }
    const end = this.peek();
    if (end.kind !== "eof")
      this.fail(stmt.where === null ? "expected WHERE or end of statement" : `unexpected ${describeToken(end)}`);
    return stmt;
  }

  private optWhere(): Expr | null {
    if (!this.isKw("WHERE")) return null;
    this.next();
    return this.expr();
  }

  private fieldList(): Field[] {
    const fields = [this.field()];
    while (this.isOp(",")) {
      this.next();
      fields.push(this.field());
    }
    return fields;
  }

  private field(): Field {
    const t = this.peek();
    if (this.isOp("*")) {
      this.next();
      return { kind: "all", pos: Parser.pos(t) };
    }
    const expr = this.expr();
    let alias: AliasPath | null = null;
    if (this.isKw("AS")) {
      this.next();
      if (this.peek().kind !== "name") this.fail("expected an alias after AS");
      alias = this.aliasPath();
    } else if (this.peek().kind === "name") {
      alias = this.aliasPath();
    }
    return { kind: "expr", expr, alias, pos: Parser.pos(t) };
  }

  private aliasPath(): AliasPath {
    const t = this.next();
    const segs: PathSeg[] = [];
    for (;;) {
      if (this.isOp(".")) {
        this.next();
        segs.push({ kind: "key", key: this.pathKey() });
      } else if (this.isOp("[")) {
        this.next();
        segs.push(this.indexSeg());
        this.expectOp("]");
      } else if (this.peek().kind === "range") {
        this.fail("a range cannot be an alias");
      } else break;
    }
    return { name: t.text, segs, pos: Parser.pos(t) };
  }

  private sources(): Source[] {
    const out: Source[] = [];
    for (;;) {
      const t = this.peek();
      if (t.kind !== "name") this.fail("expected a topic or event name in double quotes");
      this.next();
      out.push({ name: t.text, pos: Parser.pos(t) });
      if (!this.isOp(",")) return out;
      this.next();
    }
  }

  expr(): Expr {
    return this.or();
  }

  private or(): Expr {
    let left = this.and();
    while (this.isKw("OR")) {
      const t = this.next();
      left = { kind: "or", left, right: this.and(), pos: Parser.pos(t) };
    }
    return left;
  }

  private and(): Expr {
    let left = this.not();
    while (this.isKw("AND")) {
      const t = this.next();
      left = { kind: "and", left, right: this.not(), pos: Parser.pos(t) };
    }
    return left;
  }

  private not(): Expr {
    if (this.isKw("NOT")) {
      const t = this.next();
      return { kind: "not", operand: this.not(), pos: Parser.pos(t) };
    }
    return this.comparison();
  }

  private comparison(): Expr {
    const left = this.additive();
    const t = this.peek();
    if (t.kind === "op" && COMPARE_OPS.has(t.text)) {
      this.next();
      const right = this.additive();
      const after = this.peek();
      if (after.kind === "op" && COMPARE_OPS.has(after.text)) this.fail("comparison operators cannot be chained");
      return { kind: "compare", op: t.text as CompareOp, left, right, pos: Parser.pos(t) };
    }
    if (this.isKw("IN")) {
      this.next();
      return { kind: "in", negated: false, value: left, list: this.inList(), pos: Parser.pos(t) };
    }
    if (this.isKw("NOT") && this.isKw("IN", this.peek(1))) {
      this.next();
      this.next();
      return { kind: "in", negated: true, value: left, list: this.inList(), pos: Parser.pos(t) };
    }
    return left;
  }

  private inList(): Expr[] {
    if (!this.isOp("(")) this.fail("expected '(' after IN");
    this.next();
    const items = [this.expr()];
    while (this.isOp(",")) {
      this.next();
      items.push(this.expr());
    }
    this.expectOp(")");
    return items;
  }

  private additive(): Expr {
    let left = this.multiplicative();
    for (;;) {
      const t = this.peek();
      if (!this.isOp("+", t) && !this.isOp("-", t)) return left;
      this.next();
      const right = this.multiplicative();
      left = { kind: "arith", op: t.text as "+" | "-", left, right, pos: Parser.pos(t) };
    }
  }

  private multiplicative(): Expr {
    let left = this.unary();
    for (;;) {
      const t = this.peek();
      let op: "*" | "/" | "div";
      if (this.isOp("*", t)) op = "*";
      else if (this.isOp("/", t)) op = "/";
      else if (this.isKw("DIV", t)) op = "div";
      else return left;
      this.next();
      const right = this.unary();
      left = { kind: "arith", op, left, right, pos: Parser.pos(t) };
    }
  }

  private unary(): Expr {
    const t = this.peek();
    if (this.isOp("-", t)) {
      this.next();
      return { kind: "neg", operand: this.unary(), pos: Parser.pos(t) };
    }
    if (this.isOp("+", t)) {
      this.next();
      return { kind: "plus", operand: this.unary(), pos: Parser.pos(t) };
    }
    return this.postfix();
  }

  private postfix(): Expr {
    let base = this.primary();
    const pos = base.pos;
    let segs: PathSeg[] = [];
    const flush = () => {
      if (segs.length > 0) {
        base = { kind: "path", base, segs, pos };
        segs = [];
      }
    };
    for (;;) {
      const t = this.peek();
      if (this.isOp(".", t)) {
        this.next();
        segs.push({ kind: "key", key: this.pathKey() });
      } else if (this.isOp("[", t)) {
        this.next();
        segs.push(this.indexSeg());
        this.expectOp("]");
      } else if (t.kind === "range") {
        this.next();
        flush();
        base = { kind: "slice", base, from: t.value, to: t.to, pos };
      } else break;
    }
    flush();
    return base;
  }

  private pathKey(): string {
    const t = this.peek();
    if (t.kind === "name" || t.kind === "string") {
      this.next();
      return t.text;
    }
    if (t.kind === "number" && t.flag) {
      this.next();
      return t.raw;
    }
    return this.fail("expected a name after '.'");
  }

  private indexSeg(): PathSeg {
    const t = this.peek();
    const t1 = this.peek(1);
    if (t.kind === "number" && t.flag && this.isOp("]", t1)) {
      this.next();
      return { kind: "index", index: t.value === 0 ? "head" : t.value };
    }
    if ((this.isOp("-", t) || this.isOp("+", t)) && t1.kind === "number" && t1.flag && this.isOp("]", this.peek(2))) {
      this.next();
      this.next();
      if (t.text === "+") return { kind: "index", index: t1.value === 0 ? "head" : t1.value };
      return { kind: "index", index: t1.value === 0 ? "tail" : -t1.value };
    }
    if (this.isOp("]", t)) this.fail("expected an index");
    return { kind: "indexExpr", expr: this.expr() };
  }

  private primary(): Expr {
    const t = this.peek();
    const pos = Parser.pos(t);
    switch (t.kind) {
      case "number":
        this.next();
        return { kind: "const", value: t.value, pos };
      case "string":
        this.next();
        return { kind: "const", value: t.text, pos };
      case "range":
        this.next();
        return { kind: "range", from: t.value, to: t.to, pos };
      case "name": {
        this.next();
        if (this.isOp("(")) return { kind: "call", name: t.text, args: this.callArgs(), pos };
        return { kind: "var", name: t.text, pos };
      }
      case "keyword":
        if (t.text === "TRUE" || t.text === "FALSE") {
          this.next();
          return { kind: "const", value: t.text === "TRUE", pos };
        }
        if (t.text === "CASE") return this.caseExpr();
        break;
      case "op":
        if (t.text === "(") {
          this.next();
          const e = this.expr();
          this.expectOp(")");
          return e;
        }
        if (t.text === "[") {
          this.next();
          const items: Expr[] = [];
          if (!this.isOp("]")) {
            items.push(this.expr());
            while (this.isOp(",")) {
              this.next();
              items.push(this.expr());
            }
          }
          this.expectOp("]");
          return { kind: "list", items, pos };
        }
        break;
      default:
        break;
    }
    return this.fail("expected an expression");
  }

  private callArgs(): Expr[] {
    this.expectOp("(");
    const args: Expr[] = [];
    if (this.isOp(")")) {
      this.next();
      return args;
    }
    args.push(this.expr());
    while (this.isOp(",")) {
      this.next();
      args.push(this.expr());
    }
    this.expectOp(")");
    return args;
  }

  private caseExpr(): Expr {
    const t = this.next();
    if (this.isKw("END")) this.fail("expected WHEN");
    const subject = this.isKw("WHEN") ? null : this.expr();
    const whens: { when: Expr; result: Expr }[] = [];
    while (this.isKw("WHEN")) {
      this.next();
      const when = this.expr();
      this.expectKw("THEN");
      whens.push({ when, result: this.expr() });
    }
    if (whens.length === 0) this.fail("expected WHEN");
    let otherwise: Expr | null = null;
    if (this.isKw("ELSE")) {
      this.next();
      otherwise = this.expr();
    }
    this.expectKw("END");
    return { kind: "case", subject, whens, otherwise, pos: Parser.pos(t) };
  }
}
