// `/metrics` and `/stats` (spec 000 §4 "Metrics and statistics"): cluster forms
// `[{node, metrics|stats}]` and bare node maps, dotted keys, integer values.

import { z } from "@hono/zod-openapi";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope, Metrics, NodeParam, Stats } from "../schemas.ts";

export function metricRoutes(t: RouteTable, d: ApiDeps): void {
  const m = d.services.metrics;
  const names = () => d.services.nodes.names();

  t.add(
    {
      name: "list_all_metrics",
      method: "get",
      path: "/metrics",
      descr: "A list of metrics of all nodes in the cluster",
      tag: "metrics",
      response: envelope(z.array(z.object({ node: z.string(), metrics: Metrics }))),
    },
    () => ok(names().map((node) => ({ node, metrics: m.metrics() }))),
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
    ({ params }) => {
      requireNode(d, params.node);
      return ok(m.metrics());
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
    () => ok(names().map((node) => ({ node, stats: m.stats() }))),
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
    ({ params }) => {
      requireNode(d, params.node);
      return ok(m.stats());
    },
  );
}
