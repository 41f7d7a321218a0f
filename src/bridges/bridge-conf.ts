// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${node} is a placeholder of the configuration, not of this code
// The bridges' configuration: `<plugins.etc_dir>/svc_bridge_mqtt.conf`, keys
// `bridge.mqtt.<name>.<key>` (spec: Bridges). The address decides the kind: `host:port` is an MQTT
// bridge (an MQTT client to a remote broker), a node name (`<name>@<host>`) an RPC bridge to a node
// of this broker (forwarding only). Every problem is reported at once, naming file:line.

import { readFileSync } from "node:fs";
import { createSecureContext } from "node:tls";
import { ConfigError } from "../config/config-error.ts";
import { parseEntry } from "../config/parse-entry.ts";
import type { AnyConfigValue, SchemaEntry } from "../config/schema-types.ts";
import { parseNodeName } from "../config/values.ts";
import { opensslCiphers } from "../listeners/tls-options.ts";
import { parseSharedFilter, validateTopicFilter, validateTopicName } from "../mqtt/topic.ts";
import { loadPluginConf, type PluginConf, type PluginConfSchema } from "../plugins/plugin-conf.ts";

export const BRIDGE_PLUGIN = "svc_bridge_mqtt";

export type ProtoVer = "mqttv3" | "mqttv4" | "mqttv5";

export interface BridgeSubscription {
  topic: string;
  qos: 0 | 1 | 2;
}

export interface BridgeTls {
  ca?: string;
  cert?: string;
  key?: string;
  ciphers?: string;
  /** The configuration's names (`tlsv1.2`...), as listeners take them. */
  versions: string[];
  verify: boolean;
  serverName?: string;
}

export interface BridgeConfig {
  name: string;
  kind: "mqtt" | "rpc";
  /** `host:port` (MQTT) or a node name (RPC). */
  address: string;
  host: string;
  port: number;
  protoVer: ProtoVer;
  /** `${node}` already replaced. */
  clientId: string;
  cleanStart: boolean;
  username?: string;
  password?: string;
  tls?: BridgeTls;
  /** Milliseconds; 0 = no keepalive. */
  keepaliveMs: number;
  forwards: string[];
  /** Prefix of forwarded topics, `${node}` already replaced; "" = none. */
  mountpoint: string;
  subscriptions: BridgeSubscription[];
  reconnectMs: number;
  retryMs: number;
  maxInflightBatches: number;
  batchCount: number;
  batchBytes: number;
  /** Directory of the on-disk cache; undefined = memory only. */
  replayqDir?: string;
  replayqSegBytes: number;
  maxQueueBytes: number;
  /** Whether the bridge starts with the plugin (auto) or on `bridges start` (manual). */
  autoStart: boolean;
}

const P = "bridge.mqtt.$name";

export const BRIDGE_CONF_SCHEMA: PluginConfSchema = {
  [`${P}.address`]: {
    type: "string",
    nonEmpty: true,
    description: "host:port of a remote MQTT broker (MQTT bridge), or a node name of this broker (RPC bridge).",
  },
  [`${P}.proto_ver`]: {
    type: "enum",
    values: ["mqttv3", "mqttv4", "mqttv5"],
    default: "mqttv4",
    description: "MQTT version of the bridge's client: 3.1, 3.1.1 or 5.0.",
  },
  [`${P}.clientid`]: {
    type: "string",
    nonEmpty: true,
    description: "Client identifier at the remote broker (${node} = this node's name; default <node>_<bridge>).",
  },
  [`${P}.client_id`]: { type: "string", nonEmpty: true, description: "Another spelling of clientid." },
  [`${P}.clean_start`]: { type: "boolean", default: "true", description: "Clean start of the remote session." },
  [`${P}.username`]: { type: "string", description: "User name at the remote broker." },
  [`${P}.password`]: { type: "string", secret: true, description: "Password at the remote broker." },
  [`${P}.ssl`]: { type: "boolean", default: "off", description: "Whether the bridge connects over TLS." },
  [`${P}.cacertfile`]: {
    type: "file",
    description: "CA certificates (PEM) the remote's certificate is checked against.",
  },
  [`${P}.certfile`]: { type: "file", description: "Client certificate (PEM)." },
  [`${P}.keyfile`]: { type: "file", description: "Client private key (PEM)." },
  [`${P}.ciphers`]: { type: "string", description: "Cipher list (OpenSSL names), comma- or colon-separated." },
  [`${P}.tls_versions`]: {
    type: "list",
    values: ["tlsv1.3", "tlsv1.2", "tlsv1.1", "tlsv1"],
    default: "tlsv1.3,tlsv1.2",
    description: "TLS versions offered, comma separated.",
  },
  [`${P}.verify`]: {
    type: "boolean",
    default: "true",
    description: "Whether the remote's certificate must be valid for its host name.",
  },
  [`${P}.server_name_indication`]: {
    type: "string",
    description: "Host name sent in SNI and checked (default: the host).",
  },
  [`${P}.keepalive`]: { type: "duration_s", default: "60s", description: "Keep alive of the bridge's client." },
  [`${P}.forwards`]: {
    type: "list",
    description: "Local topic filters whose messages are forwarded, comma separated.",
  },
  [`${P}.mountpoint`]: {
    type: "string",
    description: "Prefix added to forwarded topics (${node} = this node's name); requires forwards.",
  },
  [`${P}.subscription.$n.topic`]: { type: "string", nonEmpty: true, description: "A remote topic filter subscribed." },
  [`${P}.subscription.$n.qos`]: { type: "integer", min: 0, max: 2, default: "1", description: "Its QoS." },
  [`${P}.reconnect_interval`]: {
    type: "duration",
    default: "30s",
    min: 100,
    description: "Wait before connecting again after the connection failed or was lost.",
  },
  [`${P}.retry_interval`]: {
    type: "duration",
    default: "20s",
    min: 100,
    description: "A batch not acknowledged in this time is sent again on a new connection.",
  },
  [`${P}.max_inflight_batches`]: {
    type: "integer",
    default: "32",
    min: 1,
    description: "Batches sent and not yet acknowledged at most.",
  },
  [`${P}.queue.batch_count_limit`]: {
    type: "integer",
    default: "32",
    min: 1,
    description: "Messages per batch at most.",
  },
  [`${P}.queue.batch_bytes_limit`]: { type: "size", default: "1MB", min: 1, description: "Bytes per batch at most." },
  [`${P}.queue.replayq_dir`]: {
    type: "path",
    description: "Directory of the on-disk cache (one per bridge); unset = the cache is in memory only.",
  },
  [`${P}.queue.replayq_seg_bytes`]: {
    type: "size",
    default: "10MB",
    min: 1024,
    description: "Largest size of one cache file; a new file starts beyond it.",
  },
  [`${P}.queue.max_total_size`]: {
    type: "size",
    default: "1GB",
    min: 1024,
    description: "Bytes the cache holds at most; beyond it the oldest messages are dropped.",
  },
  [`${P}.start_type`]: {
    type: "enum",
    values: ["auto", "manual"],
    default: "manual",
    description: "auto: the bridge starts with the plugin; manual: on `svc_ctl bridges start <name>`.",
  },
};

/** Why OpenSSL refuses a bridge's TLS files or ciphers, or null. */
export function tlsProblem(t: BridgeTls): string | null {
  try {
    const read = (f: string | undefined) => (f === undefined ? undefined : readFileSync(f));
    createSecureContext({ ca: read(t.ca), cert: read(t.cert), key: read(t.key), ciphers: opensslCiphers(t.ciphers) });
    return null;
  } catch (err) {
    return (err as Error).message;
  }
}

/** A topic filter a bridge may forward or subscribe to, or the reason it may not. */
export function filterProblem(filter: string): string | null {
  if (!validateTopicFilter(filter, 0)) return `invalid topic filter ${JSON.stringify(filter)}`;
  if (parseSharedFilter(filter) !== null) return `shared subscription ${JSON.stringify(filter)} cannot be bridged`;
  return null;
}

/** `host:port`, or null. IPv6 hosts are written in brackets: `[::1]:1883`. */
export function parseHostPort(address: string): { host: string; port: number } | null {
  const m = /^(?:\[([^\]]+)\]|([^:@[\]]+)):([0-9]{1,5})$/.exec(address);
  if (m === null) return null;
  const port = Number(m[3]);
  if (port < 1 || port > 65535) return null;
  return { host: m[1] ?? m[2], port };
}

/** Reads `<dir>/svc_bridge_mqtt.conf` into one config per bridge name (sorted by name). */
export function loadBridgeConf(dir: string, nodeName: string, cwd?: string): BridgeConfig[] {
  const conf = loadPluginConf(dir, BRIDGE_PLUGIN, BRIDGE_CONF_SCHEMA, { cwd });
  const names = new Set<string>();
  for (const key of conf.values.keys()) names.add(key.split(".")[2]);
  const issues: string[] = [];
  const out = [...names].sort().map((name) => readBridge(conf, name, nodeName, issues, cwd));
  // Two caches in one directory would overwrite each other's files.
  const dirs = new Map<string, string>();
  for (const b of out) {
    if (b.replayqDir === undefined) continue;
    const other = dirs.get(b.replayqDir);
    const at = conf.values.get(`bridge.mqtt.${b.name}.queue.replayq_dir`)?.origin ?? BRIDGE_PLUGIN;
    if (other !== undefined)
      issues.push(`${at}: bridge.mqtt.${b.name}.queue.replayq_dir: the directory of bridge ${other} too`);
    else dirs.set(b.replayqDir, b.name);
  }
  if (issues.length > 0) throw new ConfigError(issues);
  return out;
}

function readBridge(conf: PluginConf, name: string, node: string, issues: string[], cwd?: string): BridgeConfig {
  const prefix = `bridge.mqtt.${name}`;
  const at = (k: string) => conf.values.get(`${prefix}.${k}`)?.origin ?? conf.file ?? BRIDGE_PLUGIN;
  const get = <T extends AnyConfigValue>(k: string): T => {
    const set = conf.values.get(`${prefix}.${k}`);
    if (set !== undefined) return set.value as T;
    const entry: SchemaEntry | undefined = BRIDGE_CONF_SCHEMA[`${P}.${k}`];
    if (entry?.default === undefined) return undefined as T;
    const r = parseEntry(entry, entry.default, cwd ?? process.cwd());
    return (r.ok ? r.value : undefined) as T;
  };
  const problem = (k: string, msg: string) => issues.push(`${at(k)}: ${prefix}.${k}: ${msg}`);
  const withNode = (s: string) => s.replaceAll("${node}", node);

  const address = get<string | undefined>("address") ?? "";
  let kind: "mqtt" | "rpc" = "mqtt";
  let host = "";
  let port = 0;
  if (address === "") issues.push(`${conf.file ?? BRIDGE_PLUGIN}: ${prefix}.address: required`);
  else if (address.includes("@")) {
    const r = parseNodeName(address);
    if (!r.ok) problem("address", r.error);
    kind = "rpc";
    host = address.slice(address.indexOf("@") + 1);
    if (address === node) problem("address", "an RPC bridge cannot point at its own node");
  } else {
    const hp = parseHostPort(address);
    if (hp === null) problem("address", `expected host:port or a node name, got ${JSON.stringify(address)}`);
    else ({ host, port } = hp);
  }

  const forwards = get<string[] | undefined>("forwards") ?? [];
  for (const f of forwards) {
    const p = filterProblem(f);
    if (p !== null) problem("forwards", p);
  }
  const mountpoint = withNode(get<string | undefined>("mountpoint") ?? "");
  if (mountpoint !== "") {
    if (forwards.length === 0) problem("mountpoint", "requires forwards");
    if (!validateTopicName(`${mountpoint}x`, 0))
      problem("mountpoint", `invalid topic prefix ${JSON.stringify(mountpoint)}`);
  }
  const subscriptions: BridgeSubscription[] = [];
  for (const g of conf.groups(`${prefix}.subscription`)) {
    const topic = g.fields.topic?.value as string | undefined;
    if (topic === undefined) {
      issues.push(`${g.origin}: ${prefix}.subscription.${g.n}.topic: required`);
      continue;
    }
    const p = filterProblem(topic);
    if (p !== null) issues.push(`${g.fields.topic.origin}: ${prefix}.subscription.${g.n}.topic: ${p}`);
    subscriptions.push({ topic, qos: ((g.fields.qos?.value as number | undefined) ?? 1) as 0 | 1 | 2 });
  }
  if (kind === "rpc" && subscriptions.length > 0)
    issues.push(`${at("address")}: ${prefix}: an RPC bridge forwards only; it has no subscriptions`);

  const ssl = get<boolean>("ssl");
  const tls: BridgeTls | undefined = ssl
    ? {
        ca: get("cacertfile"),
        cert: get("certfile"),
        key: get("keyfile"),
        ciphers: get("ciphers"),
        versions: get<string[]>("tls_versions"),
        verify: get("verify"),
        serverName: get("server_name_indication"),
      }
    : undefined;
  if (tls !== undefined && (tls.cert === undefined) !== (tls.key === undefined))
    problem(tls.cert === undefined ? "keyfile" : "certfile", "certfile and keyfile go together");
  else if (tls !== undefined) {
    const p = tlsProblem(tls);
    if (p !== null) problem("ssl", `TLS settings refused: ${p}`);
  }

  const clientId = withNode(
    get<string | undefined>("clientid") ?? get<string | undefined>("client_id") ?? `${node}_${name}`,
  );
  return {
    name,
    kind,
    address,
    host,
    port,
    protoVer: get("proto_ver"),
    clientId,
    cleanStart: get("clean_start"),
    username: get("username"),
    password: get("password"),
    tls,
    keepaliveMs: get("keepalive"),
    forwards,
    mountpoint,
    subscriptions,
    reconnectMs: get("reconnect_interval"),
    retryMs: get("retry_interval"),
    maxInflightBatches: get("max_inflight_batches"),
    batchCount: get("queue.batch_count_limit"),
    batchBytes: get("queue.batch_bytes_limit"),
    replayqDir: get("queue.replayq_dir"),
    replayqSegBytes: get("queue.replayq_seg_bytes"),
    maxQueueBytes: get("queue.max_total_size"),
    autoStart: get<string>("start_type") === "auto",
  };
}
