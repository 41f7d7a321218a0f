// `status`: `Node '<name>' <version> is started` while the node runs (exit 1 otherwise).

import type { NodeInfo } from "../api-types.ts";
import { seg } from "../client.ts";
import type { CommandGroup } from "../command.ts";
import { CliError, UsageError } from "../errors.ts";

export const status: CommandGroup = {
  name: "status",
  usage: [["status", "Show broker status"]],
  async run(ctx, args) {
    if (args.length > 0) throw new UsageError("status takes no arguments");
    const s = await ctx.api.status();
    const node = await ctx.node();
    if (!s.running) throw new CliError(`Node '${node}' is not running: ${s.text.split("\n").at(-1)}`);
    const info = await ctx.api.get<NodeInfo>(`/brokers/${seg(node)}`);
    ctx.emit({ node, version: info.version, status: "started", running: true }, () => [
      `Node '${node}' ${info.version} is started`,
    ]);
  },
};
