// `cluster status` and `cluster force-leave <node>`. `join` and `leave` need manual discovery,
// which svc does not have yet (etcd discovery forms the cluster): they are not offered.

import type { ClusterStatus } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";
import { CliError } from "../errors.ts";

const atoms = (names: string[]): string => `[${names.map((n) => `'${n}'`).join(",")}]`;

export const cluster: CommandGroup = {
  name: "cluster",
  usage: [
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
