// `/subscriptions` and `/routes` (spec 000 §4): paginated lists with the subscription filters of
// emqx-facts §3.2, per-client lookups, node-scoped forms, and the route table. The plain forms
// answer for the whole cluster (routes: this node's filters plus the cluster route table it
// watches, `{topic, node}`), the node forms for that node.

import { z } from "@hono/zod-openapi";
import type { SubscriptionQuery } from "../../services/subscriptions.ts";
import { pageOf, requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok, paged, pagedRows, windowOf } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import {
  ClientParam,
  envelope,
  NodeClientParam,
  NodeParam,
  pagedEnvelope,
  pageQuery,
  Route,
  Subscription,
  TopicParam,
} from "../schemas.ts";

export function subscriptionFilters(maxRowLimit: number) {
  return pageQuery(maxRowLimit).extend({
    clientid: z.string().optional().openapi({ description: "Exact client id" }),
    topic: z.string().optional().openapi({ description: "Exact topic filter (a shared one matches on its filter)" }),
    qos: z.coerce.number().int().min(0).max(2).optional().openapi({ type: "integer", description: "QoS 0, 1 or 2" }),
    share: z.string().optional().openapi({ description: "Shared subscription group" }),
    _match_topic: z.string().optional().openapi({ description: "Topic name the filter matches" }),
  });
}

type Filters = z.output<ReturnType<typeof subscriptionFilters>>;

function toQuery(q: Filters): SubscriptionQuery {
  return { clientid: q.clientid, topic: q.topic, qos: q.qos, share: q.share, match_topic: q._match_topic };
}

export function subscriptionRoutes(t: RouteTable, d: ApiDeps): void {
  const subs = d.services.subscriptions;
  const tag = "subscriptions";
  const query = subscriptionFilters(d.maxRowLimit);

  t.add(
    {
      name: "list_subscriptions",
      method: "get",
      path: "/subscriptions",
      descr: "A list of subscriptions in the cluster",
      tag,
      query,
      response: pagedEnvelope(Subscription),
    },
    async ({ query: q }) => {
      const p = pageOf(d, q);
      return pagedRows(await subs.findPage(toQuery(q), windowOf(p)), p);
    },
  );

  t.add(
    {
      name: "lookup_client_subscriptions",
      method: "get",
      path: "/subscriptions/{clientid}",
      descr: "A list of subscriptions of a client",
      tag,
      params: ClientParam,
      response: envelope(z.array(Subscription)),
    },
    async ({ params }) => ok(await subs.findOfClient(params.clientid)),
  );

  t.add(
    {
      name: "list_node_subscriptions",
      method: "get",
      path: "/nodes/{node}/subscriptions",
      descr: "A list of subscriptions on a node",
      tag,
      params: NodeParam,
      query,
      response: pagedEnvelope(Subscription),
    },
    async ({ params, query: q }) => {
      requireNode(d, params.node);
      const p = pageOf(d, q);
      return pagedRows(await subs.findPage(toQuery(q), windowOf(p), params.node), p);
    },
  );

  t.add(
    {
      name: "lookup_node_client_subscriptions",
      method: "get",
      path: "/nodes/{node}/subscriptions/{clientid}",
      descr: "A list of subscriptions of a client on a node",
      tag,
      params: NodeClientParam,
      response: envelope(z.array(Subscription)),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await subs.findOfClient(params.clientid, params.node));
    },
  );

  t.add(
    {
      name: "list_routes",
      method: "get",
      path: "/routes",
      descr: "List routes",
      tag: "routes",
      query: pageQuery(d.maxRowLimit),
      response: pagedEnvelope(Route),
    },
    ({ query: q }) => paged(subs.clusterRoutes(), pageOf(d, q)),
  );

  t.add(
    {
      name: "lookup_routes",
      method: "get",
      path: "/routes/{topic}",
      descr: "Lookup routes to a topic",
      tag: "routes",
      params: TopicParam,
      response: envelope(z.array(Route)),
    },
    ({ params }) => ok(subs.clusterRoute(params.topic)),
  );
}
