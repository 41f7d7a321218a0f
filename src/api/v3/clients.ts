// `/clients` and its node-scoped forms (spec 000 §4 "Clients"): the list with pagination and the
// filters of emqx-facts §3.2, lookups by client id and user name (arrays, empty when absent),
// kick, and the client's ACL cache. The plain forms answer for the whole cluster (the list is
// gathered from every node, in node-name order, then paged), the node forms for that node.

import { z } from "@hono/zod-openapi";
import type { ClientQuery } from "../../services/clients.ts";
import { pageOf, requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok, pagedRows, windowOf } from "../envelope.ts";
import { clientNotOnline } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import {
  AclCacheEntry,
  Client,
  ClientParam,
  Done,
  envelope,
  NodeClientParam,
  NodeParam,
  NodeUsernameParam,
  pagedEnvelope,
  pageQuery,
  queryBool,
  queryNat,
  UsernameParam,
} from "../schemas.ts";

const str = (description: string) => z.string().optional().openapi({ description });
const seconds = (description: string) =>
  z.coerce
    .number()
    .min(0)
    .optional()
    .openapi({ type: "number", description: `${description} (seconds since the epoch)` });

export function clientFilters(maxRowLimit: number) {
  return pageQuery(maxRowLimit).extend({
    clientid: str("Exact client id"),
    username: str("Exact user name"),
    zone: str("Zone name"),
    ip_address: str("Client IP address"),
    conn_state: z.enum(["connected", "disconnected", "idle"]).optional(),
    clean_start: queryBool("Clean Start flag"),
    proto_name: str("Protocol name (MQTT)"),
    proto_ver: queryNat("Protocol version (3, 4, 5)"),
    _like_clientid: str("Substring of the client id"),
    _like_username: str("Substring of the user name"),
    _gte_created_at: seconds("Session created at or after"),
    _lte_created_at: seconds("Session created at or before"),
    _gte_connected_at: seconds("Connected at or after"),
    _lte_connected_at: seconds("Connected at or before"),
    _gte_mqueue_len: queryNat("Message queue length at least"),
    _lte_mqueue_len: queryNat("Message queue length at most"),
    _gte_mqueue_dropped: queryNat("Dropped queue messages at least"),
    _lte_mqueue_dropped: queryNat("Dropped queue messages at most"),
  });
}

type Filters = z.output<ReturnType<typeof clientFilters>>;

export function toClientQuery(q: Filters): ClientQuery {
  return {
    clientid: q.clientid,
    username: q.username,
    zone: q.zone,
    ip_address: q.ip_address,
    conn_state: q.conn_state,
    clean_start: q.clean_start === undefined ? undefined : q.clean_start === "true",
    proto_name: q.proto_name,
    proto_ver: q.proto_ver,
    like_clientid: q._like_clientid,
    like_username: q._like_username,
    gte_created_at: q._gte_created_at,
    lte_created_at: q._lte_created_at,
    gte_connected_at: q._gte_connected_at,
    lte_connected_at: q._lte_connected_at,
    gte_mqueue_len: q._gte_mqueue_len,
    lte_mqueue_len: q._lte_mqueue_len,
    gte_mqueue_dropped: q._gte_mqueue_dropped,
    lte_mqueue_dropped: q._lte_mqueue_dropped,
  };
}

export function clientRoutes(t: RouteTable, d: ApiDeps): void {
  const clients = d.services.clients;
  const tag = "clients";
  const query = clientFilters(d.maxRowLimit);
  const list = envelope(z.array(Client));

  t.add(
    {
      name: "list_clients",
      method: "get",
      path: "/clients",
      descr: "A list of clients in the cluster",
      tag,
      query,
      response: pagedEnvelope(Client),
    },
    async ({ query: q }) => {
      const p = pageOf(d, q);
      return pagedRows(await clients.findPage(toClientQuery(q), windowOf(p)), p);
    },
  );

  t.add(
    {
      name: "list_node_clients",
      method: "get",
      path: "/nodes/{node}/clients",
      descr: "A list of clients on a node",
      tag,
      params: NodeParam,
      query,
      response: pagedEnvelope(Client),
    },
    async ({ params, query: q }) => {
      requireNode(d, params.node);
      const p = pageOf(d, q);
      return pagedRows(await clients.findPage(toClientQuery(q), windowOf(p), params.node), p);
    },
  );

  t.add(
    {
      name: "lookup_client_via_username",
      method: "get",
      path: "/clients/username/{username}",
      descr: "Lookup clients by user name in the cluster",
      tag,
      params: UsernameParam,
      response: list,
    },
    async ({ params }) => ok(await clients.findByUsername(params.username)),
  );

  t.add(
    {
      name: "lookup_node_client_via_username",
      method: "get",
      path: "/nodes/{node}/clients/username/{username}",
      descr: "Lookup clients by user name on a node",
      tag,
      params: NodeUsernameParam,
      response: list,
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await clients.findByUsername(params.username, params.node));
    },
  );

  t.add(
    {
      name: "list_acl_cache",
      method: "get",
      path: "/clients/{clientid}/acl_cache",
      descr: "A list of the ACL cache of a connected client",
      tag,
      params: ClientParam,
      response: envelope(z.array(AclCacheEntry)),
    },
    async ({ params }) => {
      const cache = await clients.aclCacheAnywhere(params.clientid);
      if (cache === undefined) throw clientNotOnline(params.clientid);
      return ok(cache);
    },
  );

  t.add(
    {
      name: "clean_acl_cache",
      method: "delete",
      path: "/clients/{clientid}/acl_cache",
      descr: "Clear the ACL cache of a connected client",
      tag,
      params: ClientParam,
      response: Done,
    },
    async ({ params }) => {
      if (!(await clients.clearAclCacheAnywhere(params.clientid))) throw clientNotOnline(params.clientid);
      return ok();
    },
  );

  t.add(
    {
      name: "lookup_client",
      method: "get",
      path: "/clients/{clientid}",
      descr: "Lookup a client in the cluster",
      tag,
      params: ClientParam,
      response: list,
    },
    async ({ params }) => ok(await clients.find(params.clientid)),
  );

  t.add(
    {
      name: "lookup_node_client",
      method: "get",
      path: "/nodes/{node}/clients/{clientid}",
      descr: "Lookup a client on a node",
      tag,
      params: NodeClientParam,
      response: list,
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await clients.find(params.clientid, params.node));
    },
  );

  t.add(
    {
      name: "kickout_client",
      method: "delete",
      path: "/clients/{clientid}",
      descr: "Kick out a client from the cluster",
      tag,
      params: ClientParam,
      response: Done,
    },
    async ({ params }) => {
      if (!(await clients.kickAnywhere(params.clientid))) throw clientNotOnline(params.clientid);
      return ok();
    },
  );
}
