// `routes list|show <Topic>`: `<topic> -> <node>` lines.

import type { Route } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";
import { NotFoundError } from "../errors.ts";

const line = (r: Route): string => `${r.topic} -> ${r.node}`;

export const routes: CommandGroup = {
  name: "routes",
  usage: [
    ["routes list", "List all routes"],
    ["routes show <Topic>", "Show a route"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "routes list");
        const all = await ctx.api.getAll<Route>("/routes");
        ctx.emit(all, () => all.map(line));
        return;
      }
      case "show": {
        arity(rest, 1, "routes show");
        const found = await ctx.api.get<Route[]>(`/routes/${seg(rest[0])}`);
        if (found.length === 0) throw new NotFoundError();
        ctx.emit(found, () => found.map(line));
        return;
      }
      default:
        throw unknownSub("routes", sub);
    }
  },
};
