// `/alarms/present` and `/alarms/history` with their node forms (spec 000 §4 "Alarms"). Present
// alarms are the service's records as they are (the spec leaves their fields open); history
// entries carry the spec's `id`, `desc`, `clear_at`.

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
  const names = () => d.services.nodes.names();
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
    () => ok(names().map((node) => ({ node, alarms: m.alarmsPresent() }))),
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
    ({ params }) => {
      requireNode(d, params.node);
      return ok(m.alarmsPresent());
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
    () => ok(names().map((node) => ({ node, alarms: m.alarmsHistory().map(historyEntry) }))),
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
    ({ params }) => {
      requireNode(d, params.node);
      return ok(m.alarmsHistory().map(historyEntry));
    },
  );
}
