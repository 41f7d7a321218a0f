// Zod schemas shared by the route modules: path parameters, pagination queries, envelopes and the
// resource shapes of spec 000 §2 and spec 001 §2 (they document the answers in the OpenAPI
// document; the services produce the values).

import { z } from "@hono/zod-openapi";

// ---- parameters -------------------------------------------------------------------------------

const pathParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path" }, description });

export const NodeParam = z.object({ node: pathParam("node", "Node name, `<name>@<host>`") });
export const ClientParam = z.object({ clientid: pathParam("clientid", "Client id") });
export const NodeClientParam = NodeParam.extend(ClientParam.shape);
export const UsernameParam = z.object({ username: pathParam("username", "MQTT user name") });
export const NodeUsernameParam = NodeParam.extend(UsernameParam.shape);
export const TopicParam = z.object({ topic: pathParam("topic", "Topic, URL-encoded") });
export const PluginParam = z.object({ plugin: pathParam("plugin", "Plugin name") });
export const NodePluginParam = NodeParam.extend(PluginParam.shape);

/** A positive integer in a query string. */
export const queryInt = (description: string, max?: number) => {
  const n = z.coerce.number().int().min(1);
  return (max === undefined ? n : n.max(max)).optional().openapi({ type: "integer", description });
};

/** A non-negative integer filter value. */
export const queryNat = (description: string) =>
  z.coerce.number().int().min(0).optional().openapi({ type: "integer", description });

export const queryBool = (description: string) => z.enum(["true", "false"]).optional().openapi({ description });

/** `_page` (default 1) and `_limit` (default and maximum `management.max_row_limit`). */
export function pageQuery(maxRowLimit: number) {
  return z.object({
    _page: queryInt("Page number, from 1 (default 1)"),
    _limit: queryInt(`Page size, 1..${maxRowLimit} (default ${maxRowLimit})`, maxRowLimit),
  });
}

/** v2: `curr_page` (default 1) and `page_size` (default and maximum `management.max_row_limit`). */
export function v2PageQuery(maxRowLimit: number) {
  return z.object({
    curr_page: queryInt("Page number, from 1 (default 1)"),
    page_size: queryInt(`Page size, 1..${maxRowLimit} (default ${maxRowLimit})`, maxRowLimit),
  });
}

// ---- envelopes --------------------------------------------------------------------------------

export const Done = z.object({ code: z.literal(0) });
export const envelope = <T extends z.ZodType>(data: T) => z.object({ code: z.literal(0), data });
export const pagedEnvelope = <T extends z.ZodType>(item: T) =>
  z.object({
    code: z.literal(0),
    data: z.array(item),
    meta: z.object({ page: z.number().int(), limit: z.number().int(), count: z.number().int() }),
  });
export const v2Envelope = <T extends z.ZodType>(result: T) => z.object({ code: z.literal(0), result });
export const v2Done = v2Envelope(z.tuple([]));
export const v2Objects = <T extends z.ZodType>(item: T) => v2Envelope(z.object({ objects: z.array(item) }));
export const v2Paged = <T extends z.ZodType>(item: T) =>
  v2Envelope(
    z.object({
      current_page: z.number().int(),
      page_size: z.number().int(),
      total_num: z.number().int(),
      total_page: z.number().int(),
      objects: z.array(item),
    }),
  );

// ---- resources (spec 000 §2) --------------------------------------------------------------------

const int = () => z.number().int();

export const NodeInfo = z
  .object({
    node: z.string(),
    node_status: z.string(),
    version: z.string(),
    sysdescr: z.string(),
    uptime: z.string(),
    datetime: z.string(),
    otp_release: z.string().openapi({ description: "JavaScript runtime and version" }),
  })
  .openapi("NodeInfo");

export const NodeStats = z
  .object({
    node: z.string(),
    name: z.string(),
    node_status: z.string(),
    version: z.string(),
    uptime: z.string(),
    otp_release: z.string(),
    connections: int(),
    load1: z.string(),
    load5: z.string(),
    load15: z.string(),
    max_fds: int().openapi({ description: "Open-file limit of the process" }),
    memory_total: z.string().openapi({ description: "Resident set size with unit (integer bytes in the lookup)" }),
    memory_used: z.string().openapi({ description: "JS heap + external with unit (integer bytes in the lookup)" }),
    process_available: int().openapi({ description: "Handles (descriptors) the process may hold" }),
    process_used: int().openapi({ description: "Handles (descriptors) open now" }),
  })
  .openapi("NodeStats");

export const Client = z
  .object({
    clientid: z.string(),
    username: z.string(),
    node: z.string(),
    proto_name: z.string(),
    ip_address: z.string(),
    zone: z.string(),
    port: int(),
    proto_ver: int(),
    keepalive: int(),
    expiry_interval: int(),
    clean_start: z.boolean(),
    is_bridge: z.boolean(),
    connected: z.boolean(),
    created_at: z.string(),
    connected_at: z.string(),
    recv_cnt: int(),
    recv_pkt: int(),
    recv_msg: int(),
    recv_oct: int(),
    send_cnt: int(),
    send_pkt: int(),
    send_msg: int(),
    send_oct: int(),
    mqueue_len: int(),
    max_mqueue: int(),
    mqueue_dropped: int(),
    mailbox_len: int(),
    heap_size: int(),
    reductions: int(),
    inflight: int(),
    max_inflight: int(),
    awaiting_rel: int(),
    max_awaiting_rel: int(),
    subscriptions_cnt: int(),
    max_subscriptions: int(),
  })
  .openapi("Client");

export const Subscription = z
  .object({ clientid: z.string(), node: z.string(), qos: int(), topic: z.string() })
  .openapi("Subscription");

export const Route = z.object({ node: z.string(), topic: z.string() }).openapi("Route");

export const AclCacheEntry = z
  .object({ access: z.string(), result: z.string(), topic: z.string(), updated_time: int() })
  .openapi("AclCacheEntry");

export const Plugin = z
  .object({
    name: z.string(),
    version: z.string(),
    description: z.string(),
    active: z.boolean(),
    type: z.enum(["auth", "bridge", "protocol", "feature"]),
  })
  .openapi("Plugin");

export const Listener = z
  .object({
    protocol: z.string(),
    listen_on: z.string(),
    acceptors: int(),
    max_conns: int(),
    current_conns: int(),
    shutdown_count: z.union([z.tuple([]), z.record(z.string(), int())]),
  })
  .openapi("Listener");

export const Metrics = z.record(z.string(), int()).openapi("Metrics");
export const Stats = z.record(z.string(), int()).openapi("Stats");

export const Alarm = z
  .object({
    id: z.string(),
    name: z.string(),
    desc: z.string(),
    message: z.string(),
    details: z.record(z.string(), z.unknown()),
    activate_at: z.string(),
    activated: z.boolean(),
  })
  .openapi("Alarm");
export const AlarmHistoryEntry = z
  .object({ id: z.string(), desc: z.string(), clear_at: z.string() })
  .openapi("AlarmHistoryEntry");

export const App = z
  .object({
    app_id: z.string(),
    name: z.string(),
    desc: z.string(),
    status: z.boolean(),
    expired: z.union([int(), z.literal("undefined")]),
  })
  .openapi("App");

export const User = z.object({ username: z.string(), tags: z.string() }).openapi("User");

export const Ban = z
  .object({
    who: z.string(),
    as: z.string().openapi({ description: "clientid, username or peerhost" }),
    by: z.string(),
    reason: z.string(),
    at: int().openapi({ description: "Seconds since the epoch" }),
    until: int().openapi({ description: "Seconds since the epoch" }),
  })
  .openapi("Ban");

export const CatalogueEntry = z
  .object({ name: z.string(), method: z.string(), path: z.string(), descr: z.string() })
  .openapi("CatalogueEntry");

// ---- v2 resources (spec 001 §2) -----------------------------------------------------------------

export const V2NodeInfo = z
  .object({
    name: z.string().optional().openapi({ description: "In the list only" }),
    version: z.string(),
    sysdescr: z.string(),
    uptime: z.string(),
    datetime: z.string(),
    otp_release: z.string(),
    node_status: z.string(),
  })
  .openapi("V2NodeInfo");

export const V2NodeStats = z
  .object({
    name: z.string(),
    otp_release: z.string(),
    memory_total: z.string(),
    memory_used: z.string(),
    process_available: int(),
    process_used: int(),
    max_fds: int(),
    clients: int(),
    node_status: z.string(),
    load1: z.string(),
    load5: z.string(),
    load15: z.string(),
  })
  .openapi("V2NodeStats");

export const V2Client = z
  .object({
    client_id: z.string(),
    username: z.string(),
    ipaddress: z.string(),
    port: int(),
    clean_sess: z.boolean(),
    proto_ver: int(),
    keepalive: int(),
    connected_at: z.string(),
  })
  .openapi("V2Client");

export const V2Session = z
  .object({
    client_id: z.string(),
    clean_sess: z.boolean(),
    max_inflight: int(),
    inflight_queue: int(),
    message_queue: int(),
    message_dropped: int(),
    awaiting_rel: int(),
    awaiting_ack: int(),
    awaiting_comp: int(),
    created_at: z.string(),
  })
  .openapi("V2Session");

export const V2Subscription = z
  .object({ client_id: z.string(), topic: z.string(), qos: int() })
  .openapi("V2Subscription");
export const V2Route = z.object({ topic: z.string(), node: z.string() }).openapi("V2Route");
export const V2Plugin = z
  .object({ name: z.string(), version: z.string(), description: z.string(), active: z.boolean() })
  .openapi("V2Plugin");
export const V2Listener = z
  .object({
    protocol: z.string(),
    listen: z.string(),
    acceptors: int(),
    max_clients: int(),
    current_clients: int(),
    shutdown_count: z.array(z.record(z.string(), int())),
  })
  .openapi("V2Listener");
