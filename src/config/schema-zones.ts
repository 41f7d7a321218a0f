// Schema entries of the zones (`zone.<zone>.<option>`; an unset option falls back to the global
// key of the same name). Part of SCHEMA (schema.ts), in its order.

import type { SchemaEntry } from "./schema-types.ts";

export const ZONE_SCHEMA = {
  // ---- zones: zone.<zone>.<option>; unset options fall back to the global keys -------------------
  "zone.$zone.idle_timeout": {
    type: "duration",
    default: "15s",
    description: "Time a new connection may take to send CONNECT before it is closed.",
  },
  "zone.$zone.enable_acl": {
    type: "boolean",
    default: "on",
    defaultFor: { internal: "off" },
    description: "Whether publishes and subscriptions are checked against the ACL.",
  },
  "zone.$zone.enable_ban": { type: "boolean", default: "on", description: "Whether banned clients are refused." },
  "zone.$zone.enable_stats": {
    type: "boolean",
    default: "on",
    description: "Whether per-connection statistics are kept.",
  },
  "zone.$zone.acl_deny_action": {
    type: "enum",
    values: ["ignore", "disconnect"],
    fallback: "acl_deny_action",
    description: "What happens to a client of this zone whose action the ACL denies.",
  },
  "zone.$zone.keepalive_backoff": {
    type: "float",
    default: "0.75",
    min: 0.5,
    description: "A client is dropped after keepalive x backoff x 2 seconds of silence (0.75 = 1.5x).",
  },
  "zone.$zone.max_subscriptions": {
    type: "integer",
    default: "0",
    min: 0,
    description: "Most subscriptions one client may hold (0 = unlimited).",
  },
  "zone.$zone.upgrade_qos": {
    type: "boolean",
    default: "off",
    description: "Whether messages are delivered at the subscription's QoS even when published lower.",
  },
  "zone.$zone.max_inflight": {
    type: "integer",
    default: "32",
    defaultFor: { internal: "128" },
    min: 0,
    max: 65535,
    description: "Size of the window of unacknowledged QoS 1/2 messages sent to a client (0 = 65535).",
  },
  "zone.$zone.retry_interval": {
    type: "duration_s",
    default: "30s",
    description: "Time after which an unacknowledged QoS 1/2 message is sent again.",
  },
  "zone.$zone.max_awaiting_rel": {
    type: "integer",
    default: "100",
    defaultFor: { internal: "1000" },
    min: 0,
    description: "Most incoming QoS 2 messages awaiting PUBREL per client (0 = unlimited).",
  },
  "zone.$zone.await_rel_timeout": {
    type: "duration_s",
    default: "300s",
    description: "Time after which an incoming QoS 2 message still awaiting PUBREL is dropped.",
  },
  "zone.$zone.session_expiry_interval": {
    type: "duration_s",
    default: "2h",
    description: "How long the session of a disconnected MQTT 3.x client with clean session off is kept.",
  },
  "zone.$zone.max_mqueue_len": {
    type: "integer",
    default: "1000",
    defaultFor: { internal: "10000" },
    min: 0,
    description:
      "Most messages queued for a client beyond its inflight window (0 = unlimited); over half of it (at most twice the inflight window), or while its socket lags, a connected client holds its publishers back until it catches up.",
  },
  "zone.$zone.mqueue_store_qos0": {
    type: "boolean",
    default: "true",
    description: "Whether QoS 0 messages are queued for offline clients.",
  },
  "zone.$zone.use_username_as_clientid": {
    type: "boolean",
    default: "false",
    description: "Whether the username replaces the client identifier after authentication.",
  },
  "zone.$zone.bypass_auth_plugins": {
    type: "boolean",
    default: "false",
    defaultFor: { internal: "true" },
    description: "Whether clients of this zone skip the authentication plugins.",
  },
  "zone.$zone.allow_anonymous": {
    type: "boolean",
    fallback: "allow_anonymous",
    defaultFor: { internal: "true" },
    description: "Whether clients of this zone that no authentication plugin accepts may connect.",
  },
  "zone.$zone.ignore_loop_deliver": {
    type: "boolean",
    fallback: "mqtt.ignore_loop_deliver",
    description: "Whether a client's own publishes are withheld from it (No Local for MQTT 3.x).",
  },
  "zone.$zone.strict_mode": {
    type: "boolean",
    fallback: "mqtt.strict_mode",
    description: "Whether packets of this zone's clients are checked strictly.",
  },
  "zone.$zone.response_information": {
    type: "string",
    fallback: "mqtt.response_information",
    description: "Response Information returned to this zone's MQTT 5.0 clients (empty = none).",
  },
  "zone.$zone.server_keepalive": {
    type: "integer",
    fallback: "mqtt.server_keepalive",
    min: 0,
    max: 65535,
    description: "Server Keep Alive in seconds imposed on this zone's MQTT 5.0 clients (0 = unset).",
  },
  "zone.$zone.max_packet_size": {
    type: "size",
    fallback: "mqtt.max_packet_size",
    min: 1,
    max: 268_435_455,
    description: "Largest MQTT packet accepted from this zone's clients.",
  },
  "zone.$zone.max_clientid_len": {
    type: "integer",
    fallback: "mqtt.max_clientid_len",
    min: 23,
    max: 65535,
    description: "Longest client identifier accepted in this zone.",
  },
  "zone.$zone.max_topic_alias": {
    type: "integer",
    fallback: "mqtt.max_topic_alias",
    min: 0,
    max: 65535,
    description: "Topic Alias Maximum announced to this zone's MQTT 5.0 clients.",
  },
  "zone.$zone.max_topic_levels": {
    type: "integer",
    fallback: "mqtt.max_topic_levels",
    min: 0,
    description: "Most levels a topic may have in this zone (0 = unlimited).",
  },
  "zone.$zone.max_qos_allowed": {
    type: "integer",
    fallback: "mqtt.max_qos_allowed",
    min: 0,
    max: 2,
    description: "Highest QoS granted to this zone's clients.",
  },
  "zone.$zone.retain_available": {
    type: "boolean",
    fallback: "mqtt.retain_available",
    description: "Whether this zone's clients may use retained messages.",
  },
  "zone.$zone.wildcard_subscription": {
    type: "boolean",
    fallback: "mqtt.wildcard_subscription",
    description: "Whether this zone's clients may subscribe with wildcards.",
  },
  "zone.$zone.shared_subscription": {
    type: "boolean",
    fallback: "mqtt.shared_subscription",
    description: "Whether this zone's clients may use shared subscriptions.",
  },
} as const satisfies Record<string, SchemaEntry>;
