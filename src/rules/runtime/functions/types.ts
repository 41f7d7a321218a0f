// The shape of a SQL function: the arities it accepts (checked when the rule is compiled) and
// its implementation, which receives the evaluated arguments and the evaluation environment
// (the running context for zero-argument context functions like clientid(), the decoded
// payload, the per-evaluation process dictionary).

export interface FnEnv {
  /** A column or an earlier alias of the running context. */
  get(name: string): unknown;
  /** The payload, JSON-decoded once per evaluation (throws RuleEvalError when not JSON). */
  payload(): unknown;
  /** proc_dict_* storage, one per evaluation. */
  procDict(): Map<unknown, unknown>;
}

export interface FnDef {
  /** Accepted argument counts, or a minimum for variadic functions. */
  readonly arity: readonly number[] | { readonly min: number };
  readonly call: (args: unknown[], env: FnEnv) => unknown;
  /** The function reads `env` (columns and aliases, the payload, proc_dict); the others ignore it. */
  readonly env?: true;
}

export type FnTable = Readonly<Record<string, FnDef>>;

/** Shorthand for a table entry of a function that reads only its arguments. */
export function fn(arity: number | readonly number[] | { min: number }, call: FnDef["call"]): FnDef {
  return { arity: typeof arity === "number" ? [arity] : arity, call };
}

/** Shorthand for a table entry of a function that reads the evaluation environment. */
export function envFn(arity: number | readonly number[] | { min: number }, call: FnDef["call"]): FnDef {
  return { arity: typeof arity === "number" ? [arity] : arity, call, env: true };
}
