// `/alarms/present` and `/alarms/history` with their node forms (spec 000 §4 "Alarms"). Present
// alarms are the service's records as they are (the spec leaves their fields open); history
// entries carry the spec's `id`, `desc`, `clear_at`. The plain forms list every running node that
// answers, the node forms ask that node.

import { z } from "@hono/zod-openapi";
import type { MetricsService } from "../../services/metrics.ts";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { Alarm, AlarmHistoryEntry, envelope, NodeParam } from "../schemas.ts";

type HistoryRecord = ReturnType<MetricsService["alarmsHistory"]>[number];

const historyEntry = (e: HistoryRecord) => ({ id: e.id, desc: e.desc, clear_at: e.clear_at });

export function alarmRoutes(t: RouteTable, d: ApiDeps): void {
  const m = d.services.metrics;
  const tag = "alarms";

  t.add(
    {
      name: "list_present_alarms",
      method: "get",
      path: "/alarms/present",
      descr: "List present alarms of all nodes in the cluster",
      tag,
      response: envelope(z.array(z.object({ node: z.string(), alarms: z.array(Alarm) }))),
    },
    async () => ok((await m.everywhere("alarmsPresent")).map((a) => ({ node: a.node, alarms: a.value }))),
  );

  t.add(
    {
      name: "list_node_present_alarms",
      method: "get",
      path: "/alarms/present/{node}",
      descr: "List present alarms of a node",
      tag,
      params: NodeParam,
      response: envelope(z.array(Alarm)),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await m.of(params.node, "alarmsPresent"));
    },
  );

  t.add(
    {
      name: "list_history_alarms",
      method: "get",
      path: "/alarms/history",
      descr: "List cleared alarms of all nodes in the cluster",
      tag,
      response: envelope(z.array(z.object({ node: z.string(), alarms: z.array(AlarmHistoryEntry) }))),
    },
    async () =>
      ok((await m.everywhere("alarmsHistory")).map((a) => ({ node: a.node, alarms: a.value.map(historyEntry) }))),
  );

  t.add(
    {
      name: "list_node_history_alarms",
      method: "get",
      path: "/alarms/history/{node}",
      descr: "List cleared alarms of a node",
      tag,
      params: NodeParam,
      response: envelope(z.array(AlarmHistoryEntry)),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok((await m.of(params.node, "alarmsHistory")).map(historyEntry));
    },
  );
}
