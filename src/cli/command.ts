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
