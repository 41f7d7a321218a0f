// `rule-actions list [-k <eventtype>]|show <ActionId>`: the actions the rule engine offers (from
// code and plugins), optionally those usable for an event type, in emqx_ctl's `action(…)` lines.

import type { ActionDef } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, options, unknownSub } from "../command.ts";

const line = (a: ActionDef): string =>
  `action(name='${a.name}', app='${a.app}', for='${a.for}', types=[${a.types.join(",")}], title ='${a.title}', description='${a.description}')`;

export const ruleActions: CommandGroup = {
  name: "rule-actions",
  usage: [
    ["rule-actions list [-k <eventtype>]", "List actions"],
    ["rule-actions show <ActionId>", "Show a rule action"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        const { positional, opts } = options(rest, { k: "for" });
        arity(positional, 0, "rule-actions list");
        const q = opts.for === undefined ? "" : `?for=${encodeURIComponent(opts.for)}`;
        const all = await ctx.api.get<ActionDef[]>(`/actions${q}`);
        ctx.emit(all, () => all.map(line));
        return;
      }
      case "show": {
        arity(rest, 1, "rule-actions show");
        const a = await ctx.api.get<ActionDef>(`/actions/${seg(rest[0])}`);
        ctx.emit(a, () => [line(a)]);
        return;
      }
      default:
        throw unknownSub("rule-actions", sub);
    }
  },
};
