// `vm [all|load|memory|process|io|ports]`: the node's statistics (`/nodes/{node}`) in the
// family's `<group>/<name> : <value>` lines. A Node process has no Erlang ports: `ports/*` shows
// the open handles and their limit, `process/*` likewise (the family's process table).

import type { NodeStats } from "../api-types.ts";
import { seg } from "../client.ts";
import type { CommandGroup } from "../command.ts";
import { unknownSub } from "../command.ts";

const GROUPS = ["load", "memory", "process", "io", "ports"] as const;
type Group = (typeof GROUPS)[number];

function values(s: NodeStats, g: Group): [string, string, string | number][] {
  switch (g) {
    case "load":
      return [
        ["cpu", "load1", s.load1],
        ["cpu", "load5", s.load5],
        ["cpu", "load15", s.load15],
      ];
    case "memory":
      return [
        ["memory", "total", s.memory_total],
        ["memory", "used", s.memory_used],
      ];
    case "process":
      return [
        ["process", "limit", s.process_available],
        ["process", "count", s.process_used],
      ];
    case "io":
      return [
        ["io", "max_fds", s.max_fds],
        ["io", "active_fds", s.process_used],
      ];
    case "ports":
      return [
        ["ports", "count", s.connections],
        ["ports", "limit", s.max_fds],
      ];
  }
}

export const vm: CommandGroup = {
  name: "vm",
  usage: [
    ["vm all", "Show info of the runtime"],
    ["vm load", "Show load of the runtime"],
    ["vm memory", "Show memory of the runtime"],
    ["vm process", "Show process of the runtime"],
    ["vm io", "Show IO of the runtime"],
    ["vm ports", "Show ports of the runtime"],
  ],
  async run(ctx, args) {
    const [sub = "all", ...rest] = args;
    if (rest.length > 0 || (sub !== "all" && !(GROUPS as readonly string[]).includes(sub)))
      throw unknownSub("vm", args.join(" "));
    const node = await ctx.node();
    const s = await ctx.api.get<NodeStats>(`/nodes/${seg(node)}`);
    const rows = (sub === "all" ? GROUPS : [sub as Group]).flatMap((g) => values(s, g));
    ctx.emit(Object.fromEntries(rows.map(([g, n, v]) => [`${g}/${n}`, v])), () =>
      rows.map(([g, n, v]) => `${`${g}/${n}`.padEnd(24)}: ${v}`),
    );
  },
};
