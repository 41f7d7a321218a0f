// `broker [stats|metrics]`: the node's description, or its statistics / metrics sorted by name.

import type { NodeInfo } from "../api-types.ts";
import { seg } from "../client.ts";
import { type CommandGroup, type Context, unknownSub } from "../command.ts";

async function counters(ctx: Context, kind: "stats" | "metrics"): Promise<void> {
  const node = await ctx.node();
  const values = await ctx.api.get<Record<string, number>>(`/nodes/${seg(node)}/${kind}`);
  const names = Object.keys(values).sort();
  ctx.emit(values, () => names.map((n) => `${n.padEnd(30)}: ${values[n]}`));
}

export const broker: CommandGroup = {
  name: "broker",
  usage: [
    ["broker", "Show broker version, uptime and description"],
    ["broker stats", "Show broker statistics of clients, topics, subscribers"],
    ["broker metrics", "Show broker metrics"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    if (rest.length > 0) throw unknownSub("broker", args.join(" "));
    if (sub === "stats" || sub === "metrics") return counters(ctx, sub);
    if (sub !== undefined) throw unknownSub("broker", sub);
    const node = await ctx.node();
    const i = await ctx.api.get<NodeInfo>(`/brokers/${seg(node)}`);
    ctx.emit(i, () => [
      `${"sysdescr".padEnd(10)}: ${i.sysdescr}`,
      `${"version".padEnd(10)}: ${i.version}`,
      `${"uptime".padEnd(10)}: ${i.uptime}`,
      `${"datetime".padEnd(10)}: ${i.datetime}`,
    ]);
  },
};
