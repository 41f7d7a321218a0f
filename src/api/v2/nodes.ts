// v2 `/management/nodes` (node info) and `/monitoring/nodes` (node statistics), spec 001 §2/§4:
// `name` appears in the info list only; memory is a string with a unit; connections are `clients`.

import { z } from "@hono/zod-openapi";
import type { NodeInfoRecord, NodeStatsRecord } from "../../services/nodes.ts";
import { requireNode, withUnit } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { v2ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { V2NodeInfo, V2NodeStats, v2Envelope } from "../schemas.ts";
import { NodeNameParam } from "./params.ts";

const info = ({ node: _, ...i }: NodeInfoRecord) => ({
  version: i.version,
  sysdescr: i.sysdescr,
  uptime: i.uptime,
  datetime: i.datetime,
  otp_release: i.otp_release,
  node_status: i.node_status,
});

const stats = (s: NodeStatsRecord) => ({
  name: s.name,
  otp_release: s.otp_release,
  memory_total: withUnit(s.memory_total),
  memory_used: withUnit(s.memory_used),
  process_available: s.process_available,
  process_used: s.process_used,
  max_fds: s.max_fds,
  clients: s.connections,
  node_status: s.node_status,
  load1: s.load1,
  load5: s.load5,
  load15: s.load15,
});

export function v2NodeRoutes(t: RouteTable, d: ApiDeps): void {
  const nodes = d.services.nodes;

  t.add(
    {
      name: "management_nodes",
      method: "get",
      path: "/management/nodes",
      descr: "Node info of every node",
      tag: "nodes",
      response: v2Envelope(z.array(V2NodeInfo)),
    },
    async () => v2ok((await nodes.infos()).map((i) => ({ name: i.node, ...info(i) }))),
  );

  t.add(
    {
      name: "management_node",
      method: "get",
      path: "/management/nodes/{node_name}",
      descr: "Node info of a node",
      tag: "nodes",
      params: NodeNameParam,
      response: v2Envelope(V2NodeInfo.omit({ name: true })),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2ok(info(await nodes.info(params.node_name)));
    },
  );

  t.add(
    {
      name: "monitoring_nodes",
      method: "get",
      path: "/monitoring/nodes",
      descr: "Statistics of every node",
      tag: "nodes",
      response: v2Envelope(z.array(V2NodeStats)),
    },
    async () => v2ok((await nodes.allStats()).map(stats)),
  );

  t.add(
    {
      name: "monitoring_node",
      method: "get",
      path: "/monitoring/nodes/{node_name}",
      descr: "Statistics of a node",
      tag: "nodes",
      params: NodeNameParam,
      response: v2Envelope(V2NodeStats),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2ok(stats(await nodes.stats(params.node_name)));
    },
  );
}
