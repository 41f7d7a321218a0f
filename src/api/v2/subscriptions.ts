// v2 subscriptions and routes (spec 001 §2/§4): `{client_id, topic, qos}`, `{topic, node}`.

import type { SubscriptionRecord } from "../../services/subscriptions.ts";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { v2objects, v2paged, v2pagedRows } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { TopicParam, V2Route, V2Subscription, v2Objects, v2Paged, v2PageQuery } from "../schemas.ts";
import { ClientIdParam, NodeClientIdParam, NodeNameParam, v2PageOf, v2WindowOf } from "./params.ts";

const sub = (s: SubscriptionRecord) => ({ client_id: s.clientid, topic: s.topic, qos: s.qos });

export function v2SubscriptionRoutes(t: RouteTable, d: ApiDeps): void {
  const subs = d.services.subscriptions;
  const query = v2PageQuery(d.maxRowLimit);

  t.add(
    {
      name: "node_subscriptions",
      method: "get",
      path: "/nodes/{node_name}/subscriptions",
      descr: "A page of the subscriptions of a node",
      tag: "subscriptions",
      params: NodeNameParam,
      query,
      response: v2Paged(V2Subscription),
    },
    async ({ params, query: q }) => {
      requireNode(d, params.node_name);
      const [page, size] = v2PageOf(d, q);
      const r = await subs.findPage({}, v2WindowOf(page, size), params.node_name);
      return v2pagedRows({ rows: r.rows.map(sub), count: r.count }, page, size);
    },
  );

  t.add(
    {
      name: "node_client_subscriptions",
      method: "get",
      path: "/nodes/{node_name}/subscriptions/{client_id}",
      descr: "A client's subscriptions on a node",
      tag: "subscriptions",
      params: NodeClientIdParam,
      response: v2Objects(V2Subscription),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2objects((await subs.findOfClient(params.client_id, params.node_name)).map(sub));
    },
  );

  t.add(
    {
      name: "client_subscriptions",
      method: "get",
      path: "/subscriptions/{client_id}",
      descr: "A client's subscriptions in the cluster",
      tag: "subscriptions",
      params: ClientIdParam,
      response: v2Objects(V2Subscription),
    },
    async ({ params }) => v2objects((await subs.findOfClient(params.client_id)).map(sub)),
  );

  t.add(
    {
      name: "routes",
      method: "get",
      path: "/routes",
      descr: "A page of the routing table",
      tag: "routes",
      query,
      response: v2Paged(V2Route),
    },
    ({ query: q }) =>
      v2paged(
        subs.clusterRoutes().map((r) => ({ topic: r.topic, node: r.node })),
        ...v2PageOf(d, q),
      ),
  );

  t.add(
    {
      name: "route",
      method: "get",
      path: "/routes/{topic}",
      descr: "Routes of a topic",
      tag: "routes",
      params: TopicParam,
      response: v2Objects(V2Route),
    },
    ({ params }) => v2objects(subs.clusterRoute(params.topic).map((r) => ({ topic: r.topic, node: r.node }))),
  );
}
