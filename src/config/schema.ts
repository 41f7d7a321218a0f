// The one configuration schema: every key svc.conf, SVC_ variables and CLI flags may set, with
// its type, default (as written in svc.conf) and a one-sentence description. `$zone`, `$kind` and
// `$name` are placeholders: `zone.$zone.max_inflight` covers `zone.external.max_inflight`, and
// `listener.$kind.$name.acceptors` covers `listener.tcp.external.acceptors`. The order of entries
// is the order of `Config.entries()`. Names follow the emqx 4.x family (emqx-facts §6.1).

import { LISTENER_SCHEMA } from "./schema-listeners.ts";
import type { SchemaEntry } from "./schema-types.ts";
import { ZONE_SCHEMA } from "./schema-zones.ts";

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
  "node.drain_timeout": {
    type: "duration",
    default: "30s",
    min: 0,
    description:
      "Longest a drain (SIGTERM) waits for other nodes to take over this node's sessions before the node deregisters and exits.",
  },
  "node.heap_trim_growth": {
    type: "size",
    default: "32MB",
    description:
      "Heap growth (and at least half the heap after the last trim) after which the node, once quiet, runs one full collection that hands the unused heap back to the OS (0 = off).",
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
  "cluster.etcd.ssl.cacertfile": {
    type: "file",
    description:
      "PEM CA certificates etcd's server certificate must chain to; set (or with keyfile/certfile) the client talks TLS to etcd (https:// endpoints).",
  },
  "cluster.etcd.ssl.keyfile": {
    type: "file",
    description: "PEM private key of the client certificate presented to etcd (with cluster.etcd.ssl.certfile).",
  },
  "cluster.etcd.ssl.certfile": {
    type: "file",
    description: "PEM client certificate presented to etcd (with cluster.etcd.ssl.keyfile).",
  },
  "cluster.k8s.apiserver": {
    type: "string",
    default: "",
    description:
      "Kubernetes API server URL when discovery is k8s (empty = the in-cluster configuration of the pod's service account).",
  },
  "cluster.k8s.service_name": {
    type: "string",
    default: "svc-headless",
    nonEmpty: true,
    description: "Headless Service whose EndpointSlices list the pods of the cluster.",
  },
  "cluster.k8s.namespace": {
    type: "string",
    default: "",
    description: "Namespace of that Service (empty = the pod's own namespace, else POD_NAMESPACE, else default).",
  },
  "cluster.k8s.address_type": {
    type: "enum",
    values: ["ip", "dns", "hostname"],
    default: "hostname",
    description:
      "How node names are built from the Service's addresses: hostname (<app>@<pod>.<service>.<namespace>.<suffix>), ip (<app>@<pod ip>) or dns (<app>@<ip-with-dashes>.<namespace>.<suffix>).",
  },
  "cluster.k8s.app_name": {
    type: "string",
    default: "svc",
    nonEmpty: true,
    description: "Name part (before @) of the node names of the cluster's pods.",
  },
  "cluster.k8s.suffix": {
    type: "string",
    default: "svc.cluster.local",
    description: "DNS suffix of node names built from hostname or dns addresses.",
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
  "telemetry.metrics": {
    type: "boolean",
    default: "off",
    description:
      "Whether the node's metrics, statistics, listener figures and alarm count are exported with OTLP (OpenTelemetry metrics: OTEL_EXPORTER_OTLP_* variables, every OTEL_METRIC_EXPORT_INTERVAL ms, 60000), beside the Prometheus exposition at /metrics.",
  },
  "telemetry.max_deliver_spans": {
    type: "integer",
    default: "10",
    min: 0,
    max: 1000000,
    description: "Most deliver spans recorded per traced message (fan-out beyond this is not traced).",
  },
  "telemetry.sampling_run": {
    type: "integer",
    default: "64",
    min: 1,
    max: 1024,
    description:
      "Publishes without a traceparent sampled in a row once one is, while they come within 10 ms of the first (each is still sampled with the sampler's ratio, and a run's spans come together: keep OTEL_BSP_MAX_QUEUE_SIZE, 2048, above the run times a message's spans or the excess is dropped); 1: each drawn on its own.",
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
  "auth.user.scram_iterations": {
    type: "integer",
    default: "4096",
    min: 4096,
    description:
      "PBKDF2 iterations of the SCRAM-SHA-256 keys derived when a svc_auth_username password is set (5.0 enhanced authentication).",
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

  ...ZONE_SCHEMA,
  ...LISTENER_SCHEMA,
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
