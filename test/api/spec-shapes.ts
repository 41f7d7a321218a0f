// The spec's field tables, written out from spec 000 §2 and spec 001 §2 (not from the
// implementation's schemas): the exact field set and JSON type of every resource.

import type { JsonType } from "./helpers.ts";

type Shape = Record<string, JsonType | JsonType[]>;

const s = "string" as const;
const i = "int" as const;
const b = "boolean" as const;

export const NODE_INFO: Shape = {
  datetime: s,
  node: s,
  node_status: s,
  otp_release: s,
  sysdescr: s,
  uptime: s,
  version: s,
};
export const NODE_INFO_LOOKUP: Shape = (({ node: _, ...rest }) => rest)(NODE_INFO);

export const NODE_STATS: Shape = {
  connections: i,
  load1: s,
  load5: s,
  load15: s,
  max_fds: i,
  memory_total: s,
  memory_used: s,
  name: s,
  node: s,
  node_status: s,
  otp_release: s,
  process_available: i,
  process_used: i,
  uptime: s,
  version: s,
};
export const NODE_STATS_LOOKUP: Shape = (({ node: _, ...rest }) => ({ ...rest, memory_total: i, memory_used: i }))(
  NODE_STATS,
);

export const CLIENT: Shape = {
  clientid: s,
  username: s,
  node: s,
  proto_name: s,
  ip_address: s,
  zone: s,
  port: i,
  proto_ver: i,
  keepalive: i,
  expiry_interval: i,
  clean_start: b,
  is_bridge: b,
  connected: b,
  created_at: s,
  connected_at: s,
  recv_cnt: i,
  recv_pkt: i,
  recv_msg: i,
  recv_oct: i,
  send_cnt: i,
  send_pkt: i,
  send_msg: i,
  send_oct: i,
  mqueue_len: i,
  max_mqueue: i,
  mqueue_dropped: i,
  mailbox_len: i,
  heap_size: i,
  reductions: i,
  inflight: i,
  max_inflight: i,
  awaiting_rel: i,
  max_awaiting_rel: i,
  subscriptions_cnt: i,
  max_subscriptions: i,
};

export const SUBSCRIPTION: Shape = { clientid: s, node: s, qos: i, topic: s };
export const ROUTE: Shape = { node: s, topic: s };
export const ACL_CACHE_ENTRY: Shape = { access: s, result: s, topic: s, updated_time: i };
export const PLUGIN: Shape = { name: s, version: s, description: s, active: b, type: s };
export const LISTENER: Shape = {
  protocol: s,
  listen_on: s,
  acceptors: i,
  max_conns: i,
  current_conns: i,
  shutdown_count: ["array", "object"],
};
export const ALARM_HISTORY: Shape = { id: s, desc: s, clear_at: s };
export const PAGE_META: Shape = { page: i, limit: i, count: i };
export const CATALOGUE_ENTRY: Shape = { name: s, method: s, path: s, descr: s };

/** `YYYY-MM-DD HH:MM:SS` (spec 000 §2). */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/;

/** Spec 000 §2 metric keys (every one must be present, each an integer). */
export const METRIC_KEYS = [
  "auth.clientid.failure",
  "auth.clientid.ignore",
  "auth.clientid.success",
  "auth.mqtt.anonymous",
  "rules.matched",
  "actions.failure",
  "actions.success",
  "channel.gc",
  "bytes.sent",
  "bytes.received",
  "messages.sent",
  "messages.received",
  "messages.retained",
  "messages.forward",
  "messages.expired",
  "messages.dropped",
  "messages.qos0.received",
  "messages.qos1.received",
  "messages.qos2.received",
  "messages.qos0.sent",
  "messages.qos1.sent",
  "messages.qos2.sent",
  "messages.qos2.dropped",
  "messages.qos2.expired",
  "packets.sent",
  "packets.received",
  "packets.connect.received",
  "packets.connack.sent",
  "packets.connack.auth_error",
  "packets.connack.error",
  "packets.publish.received",
  "packets.publish.sent",
  "packets.publish.error",
  "packets.publish.auth_error",
  "packets.puback.received",
  "packets.puback.sent",
  "packets.puback.missed",
  "packets.pubrec.received",
  "packets.pubrec.sent",
  "packets.pubrec.missed",
  "packets.pubrec.inuse",
  "packets.pubrel.received",
  "packets.pubrel.sent",
  "packets.pubrel.missed",
  "packets.pubcomp.received",
  "packets.pubcomp.sent",
  "packets.pubcomp.missed",
  "packets.pubcomp.inuse",
  "packets.subscribe.received",
  "packets.subscribe.error",
  "packets.subscribe.auth_error",
  "packets.suback.sent",
  "packets.unsubscribe.received",
  "packets.unsubscribe.error",
  "packets.unsuback.sent",
  "packets.pingreq.received",
  "packets.pingresp.sent",
  "packets.disconnect.received",
  "packets.disconnect.sent",
  "packets.auth.received",
  "packets.auth.sent",
];

/** Spec 000 §2 statistics names, each with `.count` and `.max`. */
export const STAT_NAMES = [
  "connections",
  "channels",
  "sessions",
  "subscriptions",
  "subscriptions.shared",
  "suboptions",
  "subscribers",
  "topics",
  "routes",
  "retained",
  "rules",
  "actions",
  "resources",
];

// ---- v2 (spec 001 §2) ------------------------------------------------------------------------------

export const V2_NODE_INFO: Shape = {
  name: s,
  version: s,
  sysdescr: s,
  uptime: s,
  datetime: s,
  otp_release: s,
  node_status: s,
};
export const V2_NODE_INFO_LOOKUP: Shape = (({ name: _, ...rest }) => rest)(V2_NODE_INFO);
export const V2_NODE_STATS: Shape = {
  name: s,
  otp_release: s,
  memory_total: s,
  memory_used: s,
  process_available: i,
  process_used: i,
  max_fds: i,
  clients: i,
  node_status: s,
  load1: s,
  load5: s,
  load15: s,
};
export const V2_CLIENT: Shape = {
  client_id: s,
  username: s,
  ipaddress: s,
  port: i,
  clean_sess: b,
  proto_ver: i,
  keepalive: i,
  connected_at: s,
};
export const V2_SESSION: Shape = {
  client_id: s,
  clean_sess: b,
  max_inflight: i,
  inflight_queue: i,
  message_queue: i,
  message_dropped: i,
  awaiting_rel: i,
  awaiting_ack: i,
  awaiting_comp: i,
  created_at: s,
};
export const V2_SUBSCRIPTION: Shape = { client_id: s, topic: s, qos: i };
export const V2_ROUTE: Shape = { topic: s, node: s };
export const V2_PLUGIN: Shape = { name: s, version: s, description: s, active: b };
export const V2_LISTENER: Shape = {
  protocol: s,
  listen: s,
  acceptors: i,
  max_clients: i,
  current_clients: i,
  shutdown_count: "array",
};
export const V2_PAGE: Shape = { current_page: i, page_size: i, total_num: i, total_page: i, objects: "array" };

export const V2_METRIC_KEYS = [
  "bytes/received",
  "bytes/sent",
  "packets/sent",
  "packets/received",
  "packets/connect",
  "packets/connack",
  "packets/subscribe",
  "packets/suback",
  "packets/unsubscribe",
  "packets/unsuback",
  "packets/pingreq",
  "packets/pingresp",
  "packets/disconnect",
  ...["publish"].flatMap((p) => [`packets/${p}/received`, `packets/${p}/sent`]),
  ...["puback", "pubrec", "pubrel", "pubcomp"].flatMap((p) => [
    `packets/${p}/received`,
    `packets/${p}/sent`,
    `packets/${p}/missed`,
  ]),
  ...["received", "sent", "dropped", "retained", "forward"].map((k) => `messages/${k}`),
  ...["qos0", "qos1", "qos2"].flatMap((q) => [`messages/${q}/received`, `messages/${q}/sent`]),
  "messages/qos2/dropped",
];

export const V2_STAT_KEYS = [
  "clients",
  "retained",
  "routes",
  "sessions",
  "subscribers",
  "subscriptions",
  "topics",
].flatMap((n) => [`${n}/count`, `${n}/max`]);
