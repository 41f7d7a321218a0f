// The one configuration schema: every key svc.conf, SVC_ variables and CLI flags may set, with
// its type, default (as written in svc.conf) and a one-sentence description. `$zone`, `$kind` and
// `$name` are placeholders: `zone.$zone.max_inflight` covers `zone.external.max_inflight`, and
// `listener.$kind.$name.acceptors` covers `listener.tcp.external.acceptors`. The order of entries
// is the order of `Config.entries()`. Names follow the emqx 4.x family (emqx-facts §6.1).

import type { SchemaEntry } from "./schema-types.ts";

const TLS = ["ssl", "wss"] as const;

export const SCHEMA = {
  // ---- node ------------------------------------------------------------------------------------
  "node.name": {
    type: "node_name",
    default: "svc@127.0.0.1",
    description: "Name of this node, <name>@<host>, unique in the cluster.",
  },
  "node.cookie": {
    type: "string",
    default: "svcsecretcookie",
    nonEmpty: true,
    secret: true,
    description: "Shared secret that nodes of one cluster must have in common.",
  },
  "node.data_dir": {
    type: "path",
    default: "data",
    description: "Directory for the node's persistent data (relative to the working directory).",
  },

  // ---- cluster ---------------------------------------------------------------------------------
  "cluster.name": {
    type: "string",
    default: "svccl",
    nonEmpty: true,
    description: "Name of the cluster this node joins.",
  },
  "cluster.discovery": {
    type: "enum",
    values: ["manual", "static", "etcd", "k8s"],
    default: "manual",
    description: "How nodes find each other: manual (cluster join), static seeds, etcd or Kubernetes.",
  },
  "cluster.static.seeds": {
    type: "list",
    item: "string",
    default: "",
    description:
      "Comma-separated nodes to join when discovery is static: name@host, or name@host:port for a link port other than rpc.tcp_server_port.",
  },
  "cluster.etcd.server": {
    type: "list",
    item: "http_url",
    default: "http://127.0.0.1:2379",
    nonEmpty: true,
    description: "Comma-separated etcd endpoints used when discovery is etcd.",
  },
  "cluster.etcd.prefix": {
    type: "string",
    default: "svccl",
    nonEmpty: true,
    description: "Key prefix of this cluster's data in etcd.",
  },
  "cluster.etcd.node_ttl": {
    type: "duration",
    default: "1m",
    min: 1000,
    description: "Lease time after which a silent node's registration in etcd expires.",
  },
  "rpc.tcp_server_port": {
    type: "integer",
    default: "5369",
    min: 0,
    max: 65535,
    description: "TCP port on which this node accepts traffic from other nodes (0 = any free port).",
  },
  "rpc.tls.keyfile": {
    type: "file",
    description:
      "PEM private key of the inter-node link; with rpc.tls.certfile, the link uses TLS (unset = plain TCP).",
  },
  "rpc.tls.certfile": {
    type: "file",
    description: "PEM certificate of the inter-node link (TLS on when set with rpc.tls.keyfile).",
  },
  "rpc.tls.cacertfile": {
    type: "file",
    description:
      "PEM CA certificates that peers' link certificates must chain to (unset = encryption only; the cookie still authenticates).",
  },

  // ---- log and telemetry -----------------------------------------------------------------------
  "log.level": {
    type: "enum",
    values: ["debug", "info", "notice", "warning", "error", "critical"],
    default: "info",
    description: "Lowest severity that is logged.",
  },
  "log.to": {
    type: "enum",
    values: ["console", "file", "both"],
    default: "console",
    description: "Where logs go: console (stdout), file (under log.dir) or both.",
  },
  "log.dir": { type: "path", default: "log", description: "Directory of log files when log.to is file or both." },
  "telemetry.tracing": {
    type: "boolean",
    default: "off",
    description: "Whether message and API tracing spans are recorded (OpenTelemetry).",
  },
  "telemetry.max_deliver_spans": {
    type: "integer",
    default: "10",
    min: 0,
    max: 1000000,
    description: "Most deliver spans recorded per traced message (fan-out beyond this is not traced).",
  },

  // ---- access control --------------------------------------------------------------------------
  allow_anonymous: {
    type: "boolean",
    default: "true",
    description: "Whether a client that no authentication plugin accepts may still connect.",
  },
  acl_nomatch: {
    type: "enum",
    values: ["allow", "deny"],
    default: "allow",
    description: "Decision when no ACL rule matches a publish or subscribe.",
  },
  acl_file: {
    type: "path",
    default: "etc/acl.conf",
    description: "File of ACL rules loaded into memory at start (relative to the working directory).",
  },
  enable_acl_cache: { type: "boolean", default: "on", description: "Whether ACL decisions are cached per client." },
  acl_cache_max_size: {
    type: "integer",
    default: "32",
    min: 1,
    description: "Maximum number of cached ACL decisions per client.",
  },
  acl_cache_ttl: { type: "duration", default: "1m", description: "How long a cached ACL decision stays valid." },
  acl_deny_action: {
    type: "enum",
    values: ["ignore", "disconnect"],
    default: "ignore",
    description: "What happens to a client whose publish or subscribe the ACL denies.",
  },
  "auth.client.password_hash": {
    type: "enum",
    values: ["plain", "md5", "sha", "sha256", "sha512", "bcrypt"],
    default: "sha256",
    description: "Hash of new svc_auth_clientid passwords, stored as 4 random salt bytes + hash(salt + password).",
  },
  "auth.user.password_hash": {
    type: "enum",
    values: ["plain", "md5", "sha", "sha256", "sha512", "bcrypt"],
    default: "sha256",
    description: "Hash of new svc_auth_username passwords, stored as 4 random salt bytes + hash(salt + password).",
  },
  "psk.file.path": {
    type: "path",
    default: "etc/psk.txt",
    description: "File of TLS-PSK identity:key lines read by svc_psk_file (relative to the working directory).",
  },
  "psk.file.delimiter": {
    type: "string",
    default: ":",
    nonEmpty: true,
    description: "Separator between identity and key on each line of the PSK file.",
  },
  "plugins.etc_dir": {
    type: "path",
    default: "etc/plugins",
    description:
      "Directory of the plugins' own configuration files, <plugin>.conf (relative to the working directory).",
  },

  // ---- MQTT protocol (zones may override each) -------------------------------------------------
  "mqtt.max_packet_size": {
    type: "size",
    default: "1MB",
    min: 1,
    max: 268_435_455,
    description: "Largest MQTT packet the broker accepts.",
  },
  "mqtt.max_clientid_len": {
    type: "integer",
    default: "65535",
    min: 23,
    max: 65535,
    description: "Longest client identifier the broker accepts.",
  },
  "mqtt.max_topic_levels": {
    type: "integer",
    default: "128",
    min: 0,
    description: "Most levels a topic may have (0 = unlimited).",
  },
  "mqtt.max_qos_allowed": {
    type: "integer",
    default: "2",
    min: 0,
    max: 2,
    description: "Highest QoS the broker grants to publishes and subscriptions.",
  },
  "mqtt.max_topic_alias": {
    type: "integer",
    default: "65535",
    min: 0,
    max: 65535,
    description: "Topic Alias Maximum announced to MQTT 5.0 clients (0 = no aliases).",
  },
  "mqtt.retain_available": {
    type: "boolean",
    default: "true",
    description: "Whether retained messages are supported.",
  },
  "mqtt.wildcard_subscription": {
    type: "boolean",
    default: "true",
    description: "Whether subscriptions may use the + and # wildcards.",
  },
  "mqtt.shared_subscription": {
    type: "boolean",
    default: "true",
    description: "Whether $share/<group>/<filter> shared subscriptions are supported.",
  },
  "mqtt.ignore_loop_deliver": {
    type: "boolean",
    default: "false",
    description: "Whether a client's own publishes are withheld from it (No Local for MQTT 3.x).",
  },
  "mqtt.strict_mode": {
    type: "boolean",
    default: "false",
    description: "Whether packets are checked strictly (UTF-8 validity, reserved flags) before use.",
  },
  "mqtt.response_information": {
    type: "string",
    default: "",
    description: "Response Information returned to MQTT 5.0 clients that request it (empty = none).",
  },
  "mqtt.server_keepalive": {
    type: "integer",
    default: "0",
    min: 0,
    max: 65535,
    description: "Server Keep Alive in seconds imposed on MQTT 5.0 clients (0 = use the client's).",
  },

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
    description: "Most messages queued for a client beyond its inflight window (0 = unlimited).",
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

  // ---- MQTT listeners: listener.<tcp|ssl|ws|wss>.<name> = <bind> | off ---------------------------
  "listener.tcp.external": {
    type: "bind_or_off",
    default: "0.0.0.0:1883",
    description: "Address of the MQTT over TCP listener (off = disabled).",
  },
  "listener.ssl.external": {
    type: "bind_or_off",
    default: "0.0.0.0:8883",
    description: "Address of the MQTT over TLS listener (off = disabled).",
  },
  "listener.ws.external": {
    type: "bind_or_off",
    default: "0.0.0.0:8083",
    description: "Address of the MQTT over WebSocket listener (off = disabled).",
  },
  "listener.wss.external": {
    type: "bind_or_off",
    default: "0.0.0.0:8084",
    description: "Address of the MQTT over secure WebSocket listener (off = disabled).",
  },
  "listener.$kind.$name": {
    type: "bind_or_off",
    description: "Address of an additional listener of that kind and name (off = disabled).",
  },
  "listener.$kind.$name.max_connections": {
    type: "integer",
    default: "1024000",
    defaultFor: { ssl: "102400", ws: "102400", wss: "102400" },
    min: 1,
    description: "Most concurrent connections the listener accepts.",
  },
  "listener.$kind.$name.acceptors": {
    type: "integer",
    default: "8",
    defaultFor: { ssl: "16", ws: "4", wss: "4" },
    min: 1,
    description: "Number of acceptors (concurrency hint for accepting connections).",
  },
  "listener.$kind.$name.max_conn_rate": {
    type: "integer",
    default: "1000",
    defaultFor: { ssl: "500", wss: "500" },
    min: 0,
    description: "Most new connections accepted per second (0 = unlimited).",
  },
  "listener.$kind.$name.zone": {
    type: "name",
    default: "external",
    description: "Zone whose settings apply to the listener's clients.",
  },
  "listener.$kind.$name.backlog": {
    type: "integer",
    default: "1024",
    min: 1,
    description: "Length of the queue of pending TCP connections.",
  },
  "listener.$kind.$name.nodelay": {
    type: "boolean",
    default: "true",
    description: "Whether Nagle's algorithm is disabled on accepted sockets.",
  },
  "listener.$kind.$name.handshake_timeout": {
    type: "duration",
    default: "15s",
    only: ["ssl", "ws", "wss"],
    description: "Time allowed for the TLS handshake or WebSocket upgrade.",
  },
  "listener.$kind.$name.mqtt_path": {
    type: "http_path",
    default: "/mqtt",
    only: ["ws", "wss"],
    description: "HTTP path on which the WebSocket listener accepts MQTT.",
  },
  "listener.$kind.$name.keyfile": {
    type: "file",
    only: TLS,
    description: "PEM private key; unset = a self-signed certificate is generated at start.",
  },
  "listener.$kind.$name.certfile": {
    type: "file",
    only: TLS,
    description: "PEM certificate chain matching keyfile; unset = a self-signed one is generated at start.",
  },
  "listener.$kind.$name.cacertfile": {
    type: "file",
    only: TLS,
    description: "PEM CA certificates used to verify client certificates.",
  },
  "listener.$kind.$name.verify": {
    type: "enum",
    values: ["verify_peer", "verify_none"],
    default: "verify_none",
    only: TLS,
    description: "Whether client certificates are requested and verified.",
  },
  "listener.$kind.$name.fail_if_no_peer_cert": {
    type: "boolean",
    default: "false",
    only: TLS,
    description: "With verify_peer, whether a client without a certificate is refused.",
  },
  "listener.$kind.$name.tls_versions": {
    type: "list",
    values: ["tlsv1.3", "tlsv1.2", "tlsv1.1", "tlsv1"],
    default: "tlsv1.3,tlsv1.2",
    nonEmpty: true,
    only: TLS,
    description: "Comma-separated TLS versions the listener accepts.",
  },
  "listener.$kind.$name.ciphers": {
    type: "list",
    only: TLS,
    description: "Comma-separated OpenSSL cipher suite names (unset = Node's defaults).",
  },
  "listener.$kind.$name.psk_ciphers": {
    type: "list",
    only: ["ssl"],
    description:
      "Comma-separated TLS 1.2 PSK cipher suites; set to accept TLS-PSK clients (svc_psk_file), not with ciphers.",
  },

  // ---- broker ----------------------------------------------------------------------------------
  "broker.sys_interval": {
    type: "duration",
    default: "1m",
    description: "Interval of the $SYS statistics and metrics messages (0 = never).",
  },
  "broker.sys_heartbeat": {
    type: "duration",
    default: "30s",
    description: "Interval of the $SYS uptime and datetime messages (0 = never).",
  },
  "broker.shared_subscription_strategy": {
    type: "enum",
    values: ["random", "round_robin", "sticky", "hash"],
    default: "random",
    description: "How a message to a shared subscription picks one member of the group.",
  },
  "broker.shared_dispatch_ack_enabled": {
    type: "boolean",
    default: "false",
    description: "Whether a QoS 1/2 shared message goes to another member when one does not acknowledge.",
  },

  // ---- retainer --------------------------------------------------------------------------------
  "retainer.storage_type": {
    type: "enum",
    values: ["ram", "disc", "disc_only"],
    default: "ram",
    description: "Where retained messages live: ram, disc (memory plus disk copy) or disc_only.",
  },
  "retainer.max_retained_messages": {
    type: "integer",
    default: "0",
    min: 0,
    description: "Most retained messages kept (0 = unlimited).",
  },
  "retainer.max_payload_size": {
    type: "size",
    default: "1MB",
    min: 0,
    description: "Largest payload that is retained.",
  },
  "retainer.expiry_interval": {
    type: "duration",
    default: "0",
    description: "Age after which a retained message is dropped (0 = never).",
  },

  // ---- sysmon ----------------------------------------------------------------------------------
  "sysmon.long_gc": {
    type: "duration",
    default: "0",
    description: "Garbage-collection pause above which a long_gc warning is published to $SYS (0 = off).",
  },
  "sysmon.long_schedule": {
    type: "duration",
    default: "240ms",
    description: "Event-loop delay above which a long_schedule warning is published to $SYS (0 = off).",
  },
  "sysmon.large_heap": {
    type: "size",
    default: "1GB",
    description: "V8 heap in use above which a large_heap warning is published to $SYS (0 = off).",
  },
  "sysmon.busy_port": {
    type: "boolean",
    default: "false",
    description: "Whether a client socket whose unsent bytes stay above sysmon.busy_port_bytes publishes busy_port.",
  },
  "sysmon.busy_port_bytes": {
    type: "size",
    default: "1MB",
    min: 1,
    description: "Unsent bytes a socket must hold at two checks in a row (1s apart) to count as busy.",
  },
  "sysmon.busy_dist_port": {
    type: "boolean",
    default: "true",
    description: "Whether a congested link to another node publishes a busy_dist_port warning.",
  },
  "sysmon.window": {
    type: "duration",
    default: "10s",
    min: 1,
    description: "Shortest time between two sysmon warnings of one kind about one subject.",
  },
  "sysmon.os.cpu_check_interval": {
    type: "duration",
    default: "60s",
    description: "How often the machine's CPU usage is checked against the watermarks (0 = never).",
  },
  "sysmon.os.cpu_high_watermark": {
    type: "integer",
    default: "80",
    min: 0,
    max: 100,
    description: "CPU usage in percent at or above which alarm cpu_high_watermark is raised.",
  },
  "sysmon.os.cpu_low_watermark": {
    type: "integer",
    default: "60",
    min: 0,
    max: 100,
    description: "CPU usage in percent below which alarm cpu_high_watermark is cleared.",
  },
  "sysmon.os.mem_check_interval": {
    type: "duration",
    default: "60s",
    description: "How often system and process memory usage are checked (0 = never).",
  },
  "sysmon.os.sysmem_high_watermark": {
    type: "integer",
    default: "70",
    min: 0,
    max: 100,
    description: "Machine memory in use, in percent, at or above which alarm high_system_memory_usage is raised.",
  },
  "sysmon.os.procmem_high_watermark": {
    type: "integer",
    default: "80",
    min: 0,
    max: 100,
    description: "This process's resident memory, in percent of its limit, that raises high_process_memory_usage.",
  },

  // ---- management API and dashboard ------------------------------------------------------------
  "management.listener.http": {
    type: "bind_or_off",
    default: "8081",
    description: "Address of the HTTP management API (off = disabled).",
  },
  "management.listener.http_v2": {
    type: "bind_or_off",
    default: "8080",
    description: "Second address serving the same management API (off = disabled).",
  },
  "management.max_row_limit": {
    type: "integer",
    default: "10000",
    min: 1,
    description: "Most rows one page of a management API listing may return.",
  },
  "management.default_application.id": {
    type: "string",
    default: "admin",
    nonEmpty: true,
    description: "AppId of the application created at first start for API access.",
  },
  "management.default_application.secret": {
    type: "string",
    default: "public",
    nonEmpty: true,
    secret: true,
    description: "AppSecret of the application created at first start.",
  },
  "dashboard.listener.http": {
    type: "bind_or_off",
    default: "18083",
    description: "Address of the web dashboard (off = disabled).",
  },
  "dashboard.default_user.login": {
    type: "string",
    default: "admin",
    nonEmpty: true,
    description: "Login of the dashboard user created at first start.",
  },
  "dashboard.default_user.password": {
    type: "string",
    default: "public",
    nonEmpty: true,
    secret: true,
    description: "Password of the dashboard user created at first start.",
  },
} as const satisfies Record<string, SchemaEntry>;

export type Schema = typeof SCHEMA;
export type SchemaKey = keyof Schema;
