// `rules list|show <Id>|create <sql> <actions-json> [-i <id>] [-e <enabled>] [-g <on_action_failed>]
// [-d <descr>]|update <Id> [-s <sql>] [-a <actions-json>] [-e <enabled>] [-g <on_action_failed>]
// [-d <descr>]|delete <Id>`: the rule engine's rules, in emqx_ctl's `rule(id='…', …)` lines.

import type { Rule } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, done, erl, jsonArg, options, unknownSub } from "../command.ts";
import { UsageError } from "../errors.ts";

const oneLine = (s: string): string => s.replace(/\s*[\r\n]+\s*/g, " ");

export const ruleLine = (r: Rule): string =>
  `rule(id='${r.id}', for='${r.for}', rawsql='${oneLine(r.rawsql)}', actions=${JSON.stringify(
    r.actions.map(({ id, name, params, fallbacks }) => ({ id, name, params, fallbacks })),
  )}, on_action_failed='${r.on_action_failed}', metrics=${erl(r.metrics, {
    atomKeys: true,
    atomStrings: true,
  })}, enabled='${r.enabled}', description='${oneLine(r.description)}')`;

function actionsArg(text: string): unknown[] {
  const v = jsonArg(text, "actions");
  if (!Array.isArray(v)) throw new UsageError("actions must be a JSON array");
  return v;
}

function boolArg(v: string | undefined, flag: string): boolean | undefined {
  if (v === undefined) return undefined;
  if (v !== "true" && v !== "false") throw new UsageError(`${flag} must be true or false, got ${v}`);
  return v === "true";
}

function failedArg(v: string | undefined): string | undefined {
  if (v !== undefined && v !== "continue" && v !== "stop")
    throw new UsageError(`-g must be continue or stop, got ${v}`);
  return v;
}

export const rules: CommandGroup = {
  name: "rules",
  usage: [
    ["rules list", "List rules"],
    ["rules show <RuleId>", "Show a rule"],
    [
      "rules create <sql> <actions-json> [-d <descr>] [-i -e -g]",
      "Create a rule (-i <id>, -e true|false, -g continue|stop)",
    ],
    [
      "rules update <RuleId> [-s <sql>] [-a <actions>] [-e -g -d]",
      "Update a rule (-e true|false, -g continue|stop, -d <descr>)",
    ],
    ["rules delete <RuleId>", "Delete a rule"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "rules list");
        const all = await ctx.api.getAll<Rule>("/rules");
        ctx.emit(all, () => all.map(ruleLine));
        return;
      }
      case "show": {
        arity(rest, 1, "rules show");
        const r = await ctx.api.get<Rule>(`/rules/${seg(rest[0])}`);
        ctx.emit(r, () => [ruleLine(r)]);
        return;
      }
      case "create": {
        const { positional, opts } = options(rest, { i: "id", e: "enabled", g: "on_action_failed", d: "description" });
        arity(positional, 2, "rules create");
        const body: Record<string, unknown> = { rawsql: positional[0], actions: actionsArg(positional[1]) };
        if (opts.id !== undefined) body.id = opts.id;
        if (opts.enabled !== undefined) body.enabled = boolArg(opts.enabled, "-e");
        if (opts.on_action_failed !== undefined) body.on_action_failed = failedArg(opts.on_action_failed);
        if (opts.description !== undefined) body.description = opts.description;
        const r = await ctx.api.post<Rule>("/rules", body);
        ctx.emit(r, () => [`Rule ${r.id} created`]);
        return;
      }
      case "update": {
        const { positional, opts } = options(rest, {
          s: "rawsql",
          a: "actions",
          e: "enabled",
          g: "on_action_failed",
          d: "description",
        });
        arity(positional, 1, "rules update");
        const body: Record<string, unknown> = {};
        if (opts.rawsql !== undefined) body.rawsql = opts.rawsql;
        if (opts.actions !== undefined) body.actions = actionsArg(opts.actions);
        if (opts.enabled !== undefined) body.enabled = boolArg(opts.enabled, "-e");
        if (opts.on_action_failed !== undefined) body.on_action_failed = failedArg(opts.on_action_failed);
        if (opts.description !== undefined) body.description = opts.description;
        if (Object.keys(body).length === 0) throw new UsageError("rules update needs at least one of -s -a -e -g -d");
        const r = await ctx.api.put<Rule>(`/rules/${seg(positional[0])}`, body);
        ctx.emit(r, () => [`Rule ${r.id} updated`]);
        return;
      }
      case "delete":
        arity(rest, 1, "rules delete");
        await ctx.api.delete(`/rules/${seg(rest[0])}`);
        done(ctx);
        return;
      default:
        throw unknownSub("rules", sub);
    }
  },
};
