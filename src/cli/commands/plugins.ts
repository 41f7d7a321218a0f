// `plugins list|load|unload|reload <Plugin>` on the node that answers.

import type { Plugin } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";
import { CliError, NotFoundError } from "../errors.ts";

const PAST = { load: "loaded", unload: "unloaded", reload: "reloaded" } as const;
const TITLE = { load: "Load", unload: "Unload", reload: "Reload" } as const;

export const plugins: CommandGroup = {
  name: "plugins",
  usage: [
    ["plugins list", "Show loaded plugins"],
    ["plugins load <Plugin>", "Load plugin"],
    ["plugins unload <Plugin>", "Unload plugin"],
    ["plugins reload <Plugin>", "Reload plugin"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    const node = await ctx.node();
    if (sub === "list") {
      arity(rest, 0, "plugins list");
      const all = await ctx.api.get<Plugin[]>(`/nodes/${seg(node)}/plugins`);
      ctx.emit(all, () =>
        all.map((p) => `Plugin(${p.name}, version=${p.version}, description=${p.description}, active=${p.active})`),
      );
      return;
    }
    if (sub !== "load" && sub !== "unload" && sub !== "reload") throw unknownSub("plugins", sub);
    arity(rest, 1, `plugins ${sub}`);
    const name = rest[0];
    try {
      await ctx.api.put(`/nodes/${seg(node)}/plugins/${seg(name)}/${sub}`);
    } catch (err) {
      if (err instanceof NotFoundError) throw new CliError(`${TITLE[sub]} plugin ${name} error: not_found`);
      if (err instanceof CliError && !err.message.startsWith("Node is not running"))
        throw new CliError(`${TITLE[sub]} plugin ${name} error: ${err.message}`);
      throw err;
    }
    ctx.emit({ result: "ok" }, () => [`Plugin ${name} ${PAST[sub]} successfully.`]);
  },
};
