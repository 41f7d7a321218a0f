// v2 clients and sessions (spec 001 §2/§4): `client_id`, `ipaddress`, `clean_sess`; pages of
// `{current_page, page_size, total_num, total_page, objects}`, lookups as `{objects}`.

import type { ClientRecord } from "../../services/clients.ts";
import type { SessionRecord } from "../../services/sessions.ts";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { v2done, v2objects, v2pagedRows } from "../envelope.ts";
import { clientNotOnline } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { V2Client, V2Session, v2Done, v2Objects, v2Paged, v2PageQuery } from "../schemas.ts";
import { ClientIdParam, NodeClientIdParam, NodeNameParam, orUndefined, v2PageOf, v2WindowOf } from "./params.ts";

const client = (c: ClientRecord) => ({
  client_id: c.clientid,
  username: orUndefined(c.username),
  ipaddress: c.ip_address,
  port: c.port,
  clean_sess: c.clean_start,
  proto_ver: c.proto_ver,
  keepalive: c.keepalive,
  connected_at: c.connected_at,
});

const session = (s: SessionRecord) => ({
  client_id: s.clientid,
  clean_sess: s.clean_start,
  max_inflight: s.max_inflight,
  inflight_queue: s.inflight,
  message_queue: s.mqueue_len,
  message_dropped: s.mqueue_dropped,
  awaiting_rel: s.awaiting_rel,
  awaiting_ack: s.awaiting_ack,
  awaiting_comp: s.awaiting_comp,
  created_at: s.created_at,
});

export function v2ClientRoutes(t: RouteTable, d: ApiDeps): void {
  const { clients, sessions } = d.services;
  const query = v2PageQuery(d.maxRowLimit);

  t.add(
    {
      name: "node_clients",
      method: "get",
      path: "/nodes/{node_name}/clients",
      descr: "A page of the clients of a node",
      tag: "clients",
      params: NodeNameParam,
      query,
      response: v2Paged(V2Client),
    },
    async ({ params, query: q }) => {
      requireNode(d, params.node_name);
      const [page, size] = v2PageOf(d, q);
      const r = await clients.findPage({}, v2WindowOf(page, size), params.node_name);
      return v2pagedRows({ rows: r.rows.map(client), count: r.count }, page, size);
    },
  );

  t.add(
    {
      name: "node_client",
      method: "get",
      path: "/nodes/{node_name}/clients/{client_id}",
      descr: "A client on a node",
      tag: "clients",
      params: NodeClientIdParam,
      response: v2Objects(V2Client),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2objects((await clients.find(params.client_id, params.node_name)).map(client));
    },
  );

  t.add(
    {
      name: "client",
      method: "get",
      path: "/clients/{client_id}",
      descr: "A client in the cluster",
      tag: "clients",
      params: ClientIdParam,
      response: v2Objects(V2Client),
    },
    async ({ params }) => v2objects((await clients.find(params.client_id)).map(client)),
  );

  t.add(
    {
      name: "kick_client",
      method: "delete",
      path: "/clients/{client_id}",
      descr: "Disconnect a client",
      tag: "clients",
      params: ClientIdParam,
      response: v2Done,
    },
    async ({ params }) => {
      if (!(await clients.kickAnywhere(params.client_id))) throw clientNotOnline(params.client_id);
      return v2done();
    },
  );

  t.add(
    {
      name: "node_sessions",
      method: "get",
      path: "/nodes/{node_name}/sessions",
      descr: "A page of the sessions of a node",
      tag: "sessions",
      params: NodeNameParam,
      query,
      response: v2Paged(V2Session),
    },
    async ({ params, query: q }) => {
      requireNode(d, params.node_name);
      const [page, size] = v2PageOf(d, q);
      const r = await sessions.findPage(v2WindowOf(page, size), params.node_name);
      return v2pagedRows({ rows: r.rows.map(session), count: r.count }, page, size);
    },
  );

  t.add(
    {
      name: "node_session",
      method: "get",
      path: "/nodes/{node_name}/sessions/{client_id}",
      descr: "A client's session on a node",
      tag: "sessions",
      params: NodeClientIdParam,
      response: v2Objects(V2Session),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      return v2objects((await sessions.find(params.client_id, params.node_name)).map(session));
    },
  );

  t.add(
    {
      name: "session",
      method: "get",
      path: "/sessions/{client_id}",
      descr: "A client's session in the cluster",
      tag: "sessions",
      params: ClientIdParam,
      response: v2Objects(V2Session),
    },
    async ({ params }) => v2objects((await sessions.find(params.client_id)).map(session)),
  );
}
