// `resource-types list|show <Type>`: the resource types of the rule engine (from code and
// plugins), in emqx_ctl's `resource_type(…)` lines.

import type { ResourceType } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";

const line = (t: ResourceType): string =>
  `resource_type(name='${t.name}', provider='${t.provider}', title ='${t.title}', description='${t.description}')`;

export const resourceTypes: CommandGroup = {
  name: "resource-types",
  usage: [
    ["resource-types list", "List all resource-types"],
    ["resource-types show <Type>", "Show a resource-type"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "resource-types list");
        const all = await ctx.api.get<ResourceType[]>("/resource_types");
        ctx.emit(all, () => all.map(line));
        return;
      }
      case "show": {
        arity(rest, 1, "resource-types show");
        const t = await ctx.api.get<ResourceType>(`/resource_types/${seg(rest[0])}`);
        ctx.emit(t, () => [line(t)]);
        return;
      }
      default:
        throw unknownSub("resource-types", sub);
    }
  },
};
