// `/metrics` and `/stats` (spec 000 §4 "Metrics and statistics"): cluster forms
// `[{node, metrics|stats}]` (every running node that answers) and bare node maps (a call to that
// node), dotted keys, integer values.

import { z } from "@hono/zod-openapi";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope, Metrics, NodeParam, Stats } from "../schemas.ts";

export function metricRoutes(t: RouteTable, d: ApiDeps): void {
  const m = d.services.metrics;

  t.add(
    {
      name: "list_all_metrics",
      method: "get",
      path: "/metrics",
      descr: "A list of metrics of all nodes in the cluster",
      tag: "metrics",
      response: envelope(z.array(z.object({ node: z.string(), metrics: Metrics }))),
    },
    async () => ok((await m.everywhere("metrics")).map((a) => ({ node: a.node, metrics: a.value }))),
  );

  t.add(
    {
      name: "list_node_metrics",
      method: "get",
      path: "/nodes/{node}/metrics",
      descr: "A list of metrics of a node",
      tag: "metrics",
      params: NodeParam,
      response: envelope(Metrics),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await m.of(params.node, "metrics"));
    },
  );

  t.add(
    {
      name: "list_stats",
      method: "get",
      path: "/stats",
      descr: "A list of stats of all nodes in the cluster",
      tag: "stats",
      response: envelope(z.array(z.object({ node: z.string(), stats: Stats }))),
    },
    async () => ok((await m.everywhere("stats")).map((a) => ({ node: a.node, stats: a.value }))),
  );

  t.add(
    {
      name: "lookup_node_stats",
      method: "get",
      path: "/nodes/{node}/stats",
      descr: "A list of stats of a node",
      tag: "stats",
      params: NodeParam,
      response: envelope(Stats),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await m.of(params.node, "stats"));
    },
  );
}
