// What a command group of svc_ctl is: its usage lines and a runner over the API client. Output
// goes through the context: human lines by default, one JSON document with --json.

import type { ApiClient } from "./client.ts";
import { UsageError } from "./errors.ts";

export type Usage = readonly (readonly [string, string])[];

export interface Context {
  api: ApiClient;
  json: boolean;
  /** Prints lines (human output). */
  print(...lines: string[]): void;
  /** With --json prints `value`, else the lines `human()` makes. */
  emit(value: unknown, human: () => string[]): void;
  /** Name of the node that answers (from `/status`). */
  node(): Promise<string>;
}

export interface CommandGroup {
  name: string;
  usage: Usage;
  run(ctx: Context, args: string[]): Promise<void>;
}

/** The family's usage line: the command padded to 70 columns, then `# description`. */
export function usageLine(cmd: string, descr: string): string {
  return `${`svc_ctl ${cmd}`.padEnd(70)}# ${descr}`;
}

export function usageLines(u: Usage): string[] {
  return u.map(([c, d]) => usageLine(c, d));
}

/** Throws a UsageError unless `args` has exactly `n` entries. */
export function arity(args: string[], n: number, what: string): void {
  if (args.length !== n) throw new UsageError(`${what} takes ${n} argument${n === 1 ? "" : "s"}`);
}

export function unknownSub(group: string, sub: string | undefined): UsageError {
  return new UsageError(sub === undefined ? `${group} needs a subcommand` : `unknown ${group} subcommand: ${sub}`);
}

/** `ok` (or `{"result":"ok"}` with --json). */
export function done(ctx: Context, line = "ok"): void {
  ctx.emit({ result: "ok" }, () => [line]);
}

/**
 * Splits `args` into positionals and the short options of `known` (each takes one value, e.g.
 * `-d <descr>`); an unknown option, a missing value or a repeated option is a UsageError.
 */
export function options(
  args: string[],
  known: Readonly<Record<string, string>>,
): { positional: string[]; opts: Record<string, string> } {
  const positional: string[] = [];
  const opts: Record<string, string> = {};
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    if (/^-[a-zA-Z]$/.test(a)) {
      const key = known[a.slice(1)];
      if (key === undefined) throw new UsageError(`unknown option ${a}`);
      const v = args[i + 1];
      if (v === undefined) throw new UsageError(`${a} needs a value`);
      if (key in opts) throw new UsageError(`${a} given twice`);
      opts[key] = v;
      i++;
    } else positional.push(a);
  }
  return { positional, opts };
}

/** Parses a JSON argument (`what` names it in the UsageError). */
export function jsonArg(text: string, what: string): unknown {
  try {
    return JSON.parse(text);
  } catch (e) {
    throw new UsageError(`${what} is not valid JSON: ${(e as Error).message}`);
  }
}

/** Erlang-like term text of a JSON value, as emqx_ctl printed with `~0p`: maps `#{k => v}`,
 * strings `<<"...">>` (or atoms when `atomStrings`), `null` as `undefined`. Keys are binaries,
 * or atoms with `atomKeys`. */
export function erl(v: unknown, o: { atomKeys?: boolean; atomStrings?: boolean } = {}): string {
  const bin = (s: string) => `<<${JSON.stringify(s)}>>`;
  const atom = (s: string) => (/^[a-z][a-zA-Z0-9_]*$/.test(s) ? s : `'${s.replace(/'/g, "\\'")}'`);
  if (v === null || v === undefined) return "undefined";
  if (typeof v === "string") return o.atomStrings === true ? atom(v) : bin(v);
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  if (Array.isArray(v)) return `[${v.map((x) => erl(x, o)).join(",")}]`;
  const entries = Object.entries(v as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return `#{${entries.map(([k, x]) => `${o.atomKeys === true ? atom(k) : bin(k)} => ${erl(x, o)}`).join(",")}}`;
}
