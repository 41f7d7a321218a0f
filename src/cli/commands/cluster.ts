// `cluster join <node> [<address>]`, `cluster leave`, `cluster status` and `cluster force-leave
// <node>`. join and leave need `cluster.discovery = manual`; the node answers, then restarts in
// (or out of) the cluster.

import type { ClusterStatus } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";
import { CliError } from "../errors.ts";

const atoms = (names: string[]): string => `[${names.map((n) => `'${n}'`).join(",")}]`;

export const cluster: CommandGroup = {
  name: "cluster",
  usage: [
    ["cluster join <Node> [<Host:Port>]", "Join the cluster"],
    ["cluster leave", "Leave the cluster"],
    ["cluster force-leave <Node>", "Force the node leave from cluster"],
    ["cluster status", "Cluster status"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "status": {
        arity(rest, 0, "cluster status");
        const s = await ctx.api.get<ClusterStatus>("/cluster");
        ctx.emit(s, () => [
          `Cluster status: #{running_nodes => ${atoms(s.running_nodes)}, stopped_nodes => ${atoms(s.stopped_nodes)}}`,
        ]);
        return;
      }
      case "join": {
        if (rest.length < 1 || rest.length > 2) arity(rest, 1, "cluster join");
        try {
          await ctx.api.post("/cluster/join", {
            node: rest[0],
            ...(rest[1] === undefined ? {} : { address: rest[1] }),
          });
        } catch (err) {
          const why = err instanceof CliError && "detail" in err ? String(err.detail) : (err as Error).message;
          throw new CliError(`Failed to join the cluster: ${why}`);
        }
        ctx.emit({ result: "ok" }, () => ["Join the cluster successfully."]);
        return;
      }
      case "leave": {
        arity(rest, 0, "cluster leave");
        try {
          await ctx.api.post("/cluster/leave", {});
        } catch (err) {
          const why = err instanceof CliError && "detail" in err ? String(err.detail) : (err as Error).message;
          throw new CliError(`Failed to leave the cluster: ${why}`);
        }
        ctx.emit({ result: "ok" }, () => ["Leave the cluster successfully."]);
        return;
      }
      case "force-leave": {
        arity(rest, 1, "cluster force-leave");
        try {
          await ctx.api.delete(`/cluster/nodes/${seg(rest[0])}`);
        } catch (err) {
          const why = err instanceof CliError && "detail" in err ? String(err.detail) : (err as Error).message;
          throw new CliError(`Failed to remove the node from cluster, error: ${why}`);
        }
        ctx.emit({ result: "ok" }, () => ["Remove the node from cluster successfully."]);
        return;
      }
      default:
        throw unknownSub("cluster", sub);
    }
  },
};
