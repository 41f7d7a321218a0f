// Schema entries of the MQTT listeners (`listener.<tcp|ssl|ws|wss>.<name> = <bind> | off` and
// their options). Part of SCHEMA (schema.ts), in its order.

import type { SchemaEntry } from "./schema-types.ts";

const TLS = ["ssl", "wss"] as const;

export const LISTENER_SCHEMA = {
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
} as const satisfies Record<string, SchemaEntry>;
