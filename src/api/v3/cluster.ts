// svc's own `/cluster` routes (the CLI's `cluster status` and `cluster force-leave <node>`): the
// running and stopped nodes, and forgetting a stopped node. Only a stopped node can be forced
// out (400 for a running one, 404 for a node the cluster does not know).

import { z } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { badParam, nodeNotFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope, NodeParam } from "../schemas.ts";

const ClusterStatus = z
  .object({ running_nodes: z.array(z.string()), stopped_nodes: z.array(z.string()) })
  .openapi("ClusterStatus");

export function clusterRoutes(t: RouteTable, d: ApiDeps): void {
  const cluster = d.services.cluster;
  const tag = "cluster";

  t.add(
    {
      name: "cluster_status",
      method: "get",
      path: "/cluster",
      descr: "Running and stopped nodes of the cluster (svc)",
      tag,
      response: envelope(ClusterStatus),
    },
    async () => ok(await cluster.status()),
  );

  t.add(
    {
      name: "cluster_join",
      method: "post",
      path: "/cluster/join",
      descr: "Join the cluster of a node (cluster.discovery = manual; the node restarts in it) (svc)",
      tag,
      body: z.object({
        node: z.string().min(1).openapi({ description: "A node of the cluster to join, name@host" }),
        address: z
          .string()
          .optional()
          .openapi({ description: "Its link address host:port (default: host and rpc.tcp_server_port)" }),
      }),
      response: Done,
    },
    async ({ body }) => {
      const out = await cluster.join(body.node, body.address);
      if (!out.ok) throw badParam(out.error);
      return ok();
    },
  );

  t.add(
    {
      name: "cluster_leave",
      method: "post",
      path: "/cluster/leave",
      descr: "Leave the cluster (cluster.discovery = manual; the node restarts on its own) (svc)",
      tag,
      response: Done,
    },
    async () => {
      const out = cluster.leave();
      if (!out.ok) throw badParam(out.error);
      return ok();
    },
  );

  t.add(
    {
      name: "cluster_force_leave",
      method: "delete",
      path: "/cluster/nodes/{node}",
      descr: "Remove a stopped node from the cluster (svc)",
      tag,
      params: NodeParam,
      response: Done,
    },
    async ({ params }) => {
      const out = await cluster.forceLeave(params.node);
      if (out === "running") throw badParam(`node is running: ${params.node}`);
      if (out === "not_found") throw nodeNotFound(params.node);
      return ok();
    },
  );
}
