// `/listeners` (spec 000 §4 "Listeners"): `[{node, listeners}]` and the node form.

import { z } from "@hono/zod-openapi";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope, Listener, NodeParam } from "../schemas.ts";

export function listenerRoutes(t: RouteTable, d: ApiDeps): void {
  const listeners = d.services.listeners;
  const tag = "listeners";

  t.add(
    {
      name: "list_listeners",
      method: "get",
      path: "/listeners",
      descr: "A list of listeners in the cluster",
      tag,
      response: envelope(z.array(z.object({ node: z.string(), listeners: z.array(Listener) }))),
    },
    async () => ok(await listeners.cluster()),
  );

  t.add(
    {
      name: "list_node_listeners",
      method: "get",
      path: "/nodes/{node}/listeners",
      descr: "A list of listeners on a node",
      tag,
      params: NodeParam,
      response: envelope(z.array(Listener)),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await listeners.list(params.node));
    },
  );
}
