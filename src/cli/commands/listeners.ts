// `listeners`: each listener of the node, its identifier then indented details.

import type { Listener } from "../api-types.ts";
import { seg } from "../client.ts";
import type { CommandGroup } from "../command.ts";
import { UsageError } from "../errors.ts";

export const listeners: CommandGroup = {
  name: "listeners",
  usage: [["listeners", "List listeners"]],
  async run(ctx, args) {
    if (args.length > 0) throw new UsageError("listeners takes no arguments");
    const node = await ctx.node();
    const all = await ctx.api.get<Listener[]>(`/nodes/${seg(node)}/listeners`);
    ctx.emit(all, () =>
      all.flatMap((l) => [
        `${l.protocol}:${l.listen_on}`,
        `  ${"listen_on".padEnd(16)}: ${l.listen_on}`,
        `  ${"acceptors".padEnd(16)}: ${l.acceptors}`,
        `  ${"max_conns".padEnd(16)}: ${l.max_conns}`,
        `  ${"current_conn".padEnd(16)}: ${l.current_conns}`,
        `  ${"shutdown_count".padEnd(16)}: ${JSON.stringify(l.shutdown_count)}`,
      ]),
    );
  },
};
