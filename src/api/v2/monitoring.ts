// v2 `/monitoring/listeners|metrics|stats` (spec 001 §2/§4): cluster forms are objects keyed by
// node name (every running node that answers); listeners `{protocol, listen, acceptors, max_clients, current_clients,
// shutdown_count}` with `shutdown_count` an array (`[{<reason>: n}]`); slash-separated keys.

import { z } from "@hono/zod-openapi";
import type { ListenerRecord } from "../../services/listeners.ts";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { v2ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { Metrics, Stats, V2Listener, v2Envelope } from "../schemas.ts";
import { v2Metrics, v2Stats } from "./keys.ts";
import { NodeNameParam } from "./params.ts";

const listener = (l: ListenerRecord) => ({
  protocol: l.protocol,
  listen: l.listen_on,
  acceptors: l.acceptors,
  max_clients: l.max_conns,
  current_clients: l.current_conns,
  shutdown_count: Object.entries(l.shutdown_count).map(([reason, n]) => ({ [reason]: n })),
});

function byNode<V, T>(answers: { node: string; value: V }[], fn: (value: V) => T): Record<string, T> {
  const out: Record<string, T> = {};
  for (const a of answers) out[a.node] = fn(a.value);
  return out;
}

export function v2MonitoringRoutes(t: RouteTable, d: ApiDeps): void {
  const { listeners, metrics } = d.services;

  t.add(
    {
      name: "listeners",
      method: "get",
      path: "/monitoring/listeners",
      descr: "Listeners of every node, keyed by node name",
      tag: "listeners",
      response: v2Envelope(z.record(z.string(), z.array(V2Listener))),
    },
    async () => {
      const out: Record<string, ReturnType<typeof listener>[]> = {};
      for (const { node, listeners: ls } of await listeners.cluster()) out[node] = ls.map(listener);
      return v2ok(out);
    },
  );

  t.add(
    {
      name: "node_listeners",
      method: "get",
      path: "/monitoring/listeners/{node_name}",
      descr: "Listeners of a node",
      tag: "listeners",
      params: NodeNameParam,
      response: v2Envelope(z.array(V2Listener)),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2ok((await listeners.list(params.node_name)).map(listener));
    },
  );

  t.add(
    {
      name: "metrics",
      method: "get",
      path: "/monitoring/metrics",
      descr: "Metrics of every node, keyed by node name",
      tag: "metrics",
      response: v2Envelope(z.record(z.string(), Metrics)),
    },
    async () => v2ok(byNode(await metrics.everywhere("metrics"), v2Metrics)),
  );

  t.add(
    {
      name: "node_metrics",
      method: "get",
      path: "/monitoring/metrics/{node_name}",
      descr: "Metrics of a node",
      tag: "metrics",
      params: NodeNameParam,
      response: v2Envelope(Metrics),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2ok(v2Metrics(await metrics.of(params.node_name, "metrics")));
    },
  );

  t.add(
    {
      name: "stats",
      method: "get",
      path: "/monitoring/stats",
      descr: "Statistics of every node, keyed by node name",
      tag: "stats",
      response: v2Envelope(z.record(z.string(), Stats)),
    },
    async () => v2ok(byNode(await metrics.everywhere("stats"), v2Stats)),
  );

  t.add(
    {
      name: "node_stats",
      method: "get",
      path: "/monitoring/stats/{node_name}",
      descr: "Statistics of a node",
      tag: "stats",
      params: NodeNameParam,
      response: v2Envelope(Stats),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2ok(v2Stats(await metrics.of(params.node_name, "stats")));
    },
  );
}
