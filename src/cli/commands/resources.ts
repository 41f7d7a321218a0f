// `resources create <type> [-i <id>] [-c <config-json>] [-d <descr>]|list [-t <type>]|show <Id>|
// delete <Id>`: the rule engine's resources, in emqx_ctl's `resource(…)` lines (status per node).

import type { Resource } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, done, erl, jsonArg, options, unknownSub } from "../command.ts";
import { UsageError } from "../errors.ts";

const line = (r: Resource, node: string): string => {
  const status = Array.isArray(r.status) ? r.status : [{ is_alive: r.status, node }];
  return `resource(id='${r.id}', type='${r.type}', config=${erl(r.config)}, status=${erl(status, {
    atomKeys: true,
    atomStrings: true,
  })}, description='${r.description}')`;
};

export const resources: CommandGroup = {
  name: "resources",
  usage: [
    ["resources create <type> [-c <config-json>] [-d <descr>]", "Create a resource (-i <id>: its id)"],
    ["resources list [-t <ResourceType>]", "List resources"],
    ["resources show <ResourceId>", "Show a resource"],
    ["resources delete <ResourceId>", "Delete a resource"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "create": {
        const { positional, opts } = options(rest, { i: "id", c: "config", d: "description" });
        arity(positional, 1, "resources create");
        const body: Record<string, unknown> = { type: positional[0] };
        if (opts.config !== undefined) {
          const c = jsonArg(opts.config, "config");
          if (typeof c !== "object" || c === null || Array.isArray(c))
            throw new UsageError("config must be a JSON object");
          body.config = c;
        }
        if (opts.id !== undefined) body.id = opts.id;
        if (opts.description !== undefined) body.description = opts.description;
        const r = await ctx.api.post<Resource>("/resources", body);
        ctx.emit(r, () => [`Resource ${r.id} created`]);
        return;
      }
      case "list": {
        const { positional, opts } = options(rest, { t: "type" });
        arity(positional, 0, "resources list");
        const all =
          opts.type === undefined
            ? await ctx.api.get<Resource[]>("/resources")
            : await ctx.api.get<Resource[]>(`/resource_types/${seg(opts.type)}/resources`);
        const node = all.length > 0 && !ctx.json ? await ctx.node() : "";
        ctx.emit(all, () => all.map((r) => line(r, node)));
        return;
      }
      case "show": {
        arity(rest, 1, "resources show");
        const r = await ctx.api.get<Resource>(`/resources/${seg(rest[0])}`);
        ctx.emit(r, () => [line(r, "")]);
        return;
      }
      case "delete":
        arity(rest, 1, "resources delete");
        await ctx.api.delete(`/resources/${seg(rest[0])}`);
        done(ctx);
        return;
      default:
        throw unknownSub("resources", sub);
    }
  },
};
