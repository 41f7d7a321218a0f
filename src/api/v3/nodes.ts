// `/brokers` and `/nodes` (spec 000 §2 "Node info", "Node statistics"). The spec's quirks hold:
// the single-node lookups omit `node`; `memory_total`/`memory_used` are strings with a unit in
// the list and integers (bytes) in the lookup.

import { z } from "@hono/zod-openapi";
import type { NodeStatsRecord } from "../../services/nodes.ts";
import { requireNode, withUnit } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope, NodeInfo, NodeParam, NodeStats } from "../schemas.ts";

export function nodeRoutes(t: RouteTable, d: ApiDeps): void {
  const nodes = d.services.nodes;
  const tag = "nodes";

  t.add(
    {
      name: "list_brokers",
      method: "get",
      path: "/brokers",
      descr: "A list of brokers in the cluster",
      tag,
      response: envelope(z.array(NodeInfo)),
    },
    async () => ok(await nodes.infos()),
  );

  t.add(
    {
      name: "lookup_broker",
      method: "get",
      path: "/brokers/{node}",
      descr: "Get broker info of a node",
      tag,
      params: NodeParam,
      response: envelope(NodeInfo.omit({ node: true })),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      const { node: _, ...info } = await nodes.info(params.node);
      return ok(info);
    },
  );

  t.add(
    {
      name: "list_nodes",
      method: "get",
      path: "/nodes",
      descr: "A list of nodes in the cluster",
      tag,
      response: envelope(z.array(NodeStats)),
    },
    async () => ok((await nodes.allStats()).map(listForm)),
  );

  t.add(
    {
      name: "lookup_node",
      method: "get",
      path: "/nodes/{node}",
      descr: "Lookup a node in the cluster",
      tag,
      params: NodeParam,
      response: envelope(
        NodeStats.omit({ node: true }).extend({ memory_total: z.number().int(), memory_used: z.number().int() }),
      ),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      const { node: _, ...stats } = await nodes.stats(params.node);
      return ok(stats);
    },
  );
}

function listForm(s: NodeStatsRecord) {
  return { ...s, memory_total: withUnit(s.memory_total), memory_used: withUnit(s.memory_used) };
}
