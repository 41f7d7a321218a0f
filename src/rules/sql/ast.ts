// The rule SQL syntax tree produced by parser.ts and compiled by runtime/compile.ts. Both
// dialects share it: FROM keeps the names as written (event names, `$events/...`, topic
// filters); what they mean is decided by the compiler.

/** Where a node starts in the SQL text (1-based line and column). */
export interface Pos {
  readonly line: number;
  readonly column: number;
}

/** One step of a path: `.key`, `[n]` (1-based, negative from the end), `[expr]`. */
export type PathSeg =
  | { readonly kind: "key"; readonly key: string }
  /** `[0]` is "head" and `[-0]` is "tail": only meaningful as AS targets (prepend/append). */
  | { readonly kind: "index"; readonly index: number | "head" | "tail" }
  | { readonly kind: "indexExpr"; readonly expr: Expr };

export type CompareOp = "=" | "!=" | "<>" | "<" | ">" | "<=" | ">=" | "=~" | "~=";
export type ArithOp = "+" | "-" | "*" | "/" | "div";

export type Expr =
  | { readonly kind: "const"; readonly value: string | number | boolean; readonly pos: Pos }
  /** A bare or double-quoted name: a column, an alias, `item`. */
  | { readonly kind: "var"; readonly name: string; readonly pos: Pos }
  /** `base.key`, `base[1]`, `base[x]`. */
  | { readonly kind: "path"; readonly base: Expr; readonly segs: readonly PathSeg[]; readonly pos: Pos }
  /** `base[from..to]` (1-based, negative from the end). */
  | { readonly kind: "slice"; readonly base: Expr; readonly from: number; readonly to: number; readonly pos: Pos }
  /** `[from..to]`: the list of integers. */
  | { readonly kind: "range"; readonly from: number; readonly to: number; readonly pos: Pos }
  | { readonly kind: "list"; readonly items: readonly Expr[]; readonly pos: Pos }
  | { readonly kind: "call"; readonly name: string; readonly args: readonly Expr[]; readonly pos: Pos }
  | { readonly kind: "neg" | "plus" | "not"; readonly operand: Expr; readonly pos: Pos }
  | { readonly kind: "arith"; readonly op: ArithOp; readonly left: Expr; readonly right: Expr; readonly pos: Pos }
  | { readonly kind: "compare"; readonly op: CompareOp; readonly left: Expr; readonly right: Expr; readonly pos: Pos }
  | { readonly kind: "and" | "or"; readonly left: Expr; readonly right: Expr; readonly pos: Pos }
  | {
      readonly kind: "in";
      readonly negated: boolean;
      readonly value: Expr;
      readonly list: readonly Expr[];
      readonly pos: Pos;
    }
  | {
      readonly kind: "case";
      /** null for the searched form `CASE WHEN cond ...`. */
      readonly subject: Expr | null;
      readonly whens: readonly { readonly when: Expr; readonly result: Expr }[];
      readonly otherwise: Expr | null;
      readonly pos: Pos;
    };

/** An AS target: a name, optionally followed by path steps (`x.y`, `a[0]`). */
export interface AliasPath {
  readonly name: string;
  readonly segs: readonly PathSeg[];
  readonly pos: Pos;
}

export type Field =
  | { readonly kind: "all"; readonly pos: Pos }
  | { readonly kind: "expr"; readonly expr: Expr; readonly alias: AliasPath | null; readonly pos: Pos };

/** A FROM entry exactly as written (quotes removed). */
export interface Source {
  readonly name: string;
  readonly pos: Pos;
}

export interface Statement {
  readonly kind: "select" | "foreach";
  readonly fields: readonly Field[];
  /** FOREACH ... DO fields, null when absent (and always for SELECT). */
  readonly doFields: readonly Field[] | null;
  /** FOREACH ... INCASE condition. */
  readonly incase: Expr | null;
  readonly from: readonly Source[];
  readonly where: Expr | null;
}
