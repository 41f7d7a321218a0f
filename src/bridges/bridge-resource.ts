// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${node} and ${var} are placeholders of configurations and templates
// The bridge as a rule-engine resource (emqx-facts §2): resource types `bridge_mqtt` (an MQTT client
// to a remote broker) and `bridge_rpc` (a node of this cluster), each instance one bridge with no
// forward filters of its own, and the action `data_to_mqtt_broker` that hands it the messages its
// rule selects (`forward_topic`: empty = the message's topic; the mountpoint is applied;
// `payload_tmpl`: empty = the selected data as JSON). The bridge caches while disconnected, on disk
// under `<data_dir>/bridges/<resource id>` with `disk_cache = on`.

import { rmSync } from "node:fs";
import { join } from "node:path";
import { makeMessage, type QoS } from "../broker/types.ts";
import { parseDuration, parseNodeName } from "../config/values.ts";
import { validateTopicName } from "../mqtt/topic.ts";
import type { ActionDef } from "../rules/actions/types.ts";
import { ActionError } from "../rules/actions/types.ts";
import { optionalParam, type ParamSpec } from "../rules/engine/records.ts";
import type { ResourceInstance, ResourceTypeDef } from "../rules/resources/types.ts";
import { compileTemplate, type Template } from "../rules/runtime/placeholders.ts";
import { jsonEncode } from "../rules/runtime/values.ts";
import { Bridge, type BridgeEnv } from "./bridge.ts";
import { type BridgeConfig, parseHostPort, tlsProblem } from "./bridge-conf.ts";

/** How long a health check waits for a connecting bridge. */
const HEALTH_WAIT_MS = 5000;
const PROTO_VERS: readonly string[] = ["mqttv3", "mqttv4", "mqttv5"];

const p = optionalParam;

const COMMON: Record<string, ParamSpec> = {
  pool_size: p("number", "Pool Size", "Accepted for compatibility: a bridge keeps one connection", { default: 8 }),
  reconnect_interval: p("string", "Reconnect Interval", "Wait before connecting again", { default: "30s" }),
  disk_cache: p("string", "Disk Cache", "on: the cache of unsent messages is kept on disk", {
    enum: ["on", "off"],
    default: "off",
  }),
};

const MQTT_PARAMS: Record<string, ParamSpec> = {
  address: p("string", "Broker Address", "host:port of the remote MQTT broker", {
    default: "127.0.0.1:1883",
    order: 1,
  }),
  clientid: p("string", "Client ID", "Client identifier at the remote broker (${node} allowed)", {
    default: "client",
    order: 2,
  }),
  append: p("boolean", "Append GUID", "Whether a unique suffix is added to the client id", { default: true, order: 3 }),
  username: p("string", "Username", "User name at the remote broker", { default: "", order: 4 }),
  password: p("string", "Password", "Password at the remote broker", { default: "", order: 5 }),
  mountpoint: p("string", "Bridge MountPoint", "Prefix of forwarded topics (${node} allowed)", {
    default: "bridge/aws/${node}/",
    order: 6,
  }),
  proto_ver: p("string", "Protocol Version", "MQTT version", {
    enum: ["mqttv3", "mqttv4", "mqttv5"],
    default: "mqttv4",
    order: 7,
  }),
  keepalive: p("string", "Keepalive", "Keep alive of the bridge's client", { default: "60s", order: 8 }),
  retry_interval: p("string", "Retry Interval", "A batch unacknowledged this long is sent again", {
    default: "20s",
    order: 9,
  }),
  bridge_mode: p("boolean", "Bridge Mode", "Accepted for compatibility (no effect)", { default: false, order: 10 }),
  ssl: p("string", "Enable SSL", "on: connect over TLS", { enum: ["on", "off"], default: "off", order: 11 }),
  cacertfile: p("string", "CA certificates", "CA certificates file (PEM)", { default: "", order: 12 }),
  certfile: p("string", "SSL Certfile", "Client certificate file (PEM)", { default: "", order: 13 }),
  keyfile: p("string", "SSL Keyfile", "Client private key file (PEM)", { default: "", order: 14 }),
  ciphers: p("string", "SSL Ciphers", "Cipher list (OpenSSL names), comma- or colon-separated", {
    default: "",
    order: 15,
  }),
  verify: p("boolean", "Verify Server Certfile", "Whether the remote's certificate is checked", {
    default: false,
    order: 16,
  }),
  server_name_indication: p("string", "Server Name Indication", "TLS SNI; empty: the host", { default: "", order: 17 }),
  ...COMMON,
};

const RPC_PARAMS: Record<string, ParamSpec> = {
  address: p("string", "Remote Node", "Name of a node of this cluster", { default: "svc2@127.0.0.1", order: 1 }),
  mountpoint: p("string", "Bridge MountPoint", "Prefix of forwarded topics (${node} allowed)", {
    default: "bridge/svc/${node}/",
    order: 2,
  }),
  batch_size: p("number", "Batch Size", "Messages per call at most", { default: 32, order: 3 }),
  ...COMMON,
};

export interface BridgeResourceDeps {
  nodeName: string;
  dataDir: string;
  env: BridgeEnv;
}

/** A running bridge resource: started at creation; messages come from `data_to_mqtt_broker`. */
export class BridgeResource implements ResourceInstance {
  constructor(
    readonly id: string,
    readonly type: string,
    readonly bridge: Bridge,
  ) {
    bridge.start();
  }

  /** Running, or connected within the connect timeout. */
  healthCheck(): Promise<boolean> {
    return this.bridge.whenRunning(HEALTH_WAIT_MS);
  }

  stop(): Promise<void> {
    return this.bridge.dispose();
  }

  /** A deleted resource's cache on disk goes with it (a resource made again with its id starts empty). */
  discard(): void {
    const dir = this.bridge.cfg.replayqDir;
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  }
}

/** A duration param: text such as `30s`, or a bare number of `bare` units. */
function ms(v: unknown, dflt: string, bare: "ms" | "s" = "ms"): number {
  const text = typeof v === "number" ? String(v) : typeof v === "string" && v !== "" ? v : dflt;
  const r = parseDuration(text, bare);
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

const str = (v: unknown, dflt = ""): string => (typeof v === "string" ? v : dflt);
const on = (v: unknown): boolean => v === true || v === "on" || v === "true";

/** A resource's config as a bridge's (throws on a bad one). */
export function resourceBridgeConfig(
  id: string,
  type: string,
  c: Record<string, unknown>,
  d: BridgeResourceDeps,
): BridgeConfig {
  const rpc = type === "bridge_rpc";
  const address = str(c.address, rpc ? "" : "127.0.0.1:1883");
  let host = "";
  let port = 0;
  if (rpc) {
    const r = parseNodeName(address);
    if (!r.ok) throw new Error(`address: ${r.error}`);
  } else {
    const hp = parseHostPort(address);
    if (hp === null) throw new Error(`address must be host:port, got ${JSON.stringify(address)}`);
    ({ host, port } = hp);
  }
  const protoVer = str(c.proto_ver, "mqttv4") as BridgeConfig["protoVer"];
  if (!PROTO_VERS.includes(protoVer)) throw new Error(`proto_ver must be one of ${PROTO_VERS.join(", ")}`);
  const withNode = (s: string) => s.replaceAll("${node}", d.nodeName);
  const clientid = withNode(str(c.clientid, "client"));
  const ssl = on(c.ssl);
  const mountpoint = withNode(str(c.mountpoint));
  if (mountpoint !== "" && !validateTopicName(`${mountpoint}x`, 0))
    throw new Error(`mountpoint: invalid topic prefix ${JSON.stringify(mountpoint)}`);
  /** A text param, undefined when empty. */
  const opt = (v: unknown) => (str(v) === "" ? undefined : str(v));
  const tls: BridgeConfig["tls"] = ssl
    ? {
        ca: opt(c.cacertfile),
        cert: opt(c.certfile),
        key: opt(c.keyfile),
        ciphers: opt(c.ciphers),
        versions: ["tlsv1.2", "tlsv1.3"],
        verify: c.verify === true,
        serverName: opt(c.server_name_indication),
      }
    : undefined;
  const problem = tls === undefined ? null : tlsProblem(tls);
  if (problem !== null) throw new Error(`TLS settings refused: ${problem}`);
  const batch = typeof c.batch_size === "number" && c.batch_size > 0 ? Math.floor(c.batch_size) : 32;
  return {
    name: id,
    kind: rpc ? "rpc" : "mqtt",
    address,
    host,
    port,
    protoVer,
    clientId: c.append === false ? clientid : `${clientid}_${Math.random().toString(16).slice(2, 10)}`,
    cleanStart: true,
    username: opt(c.username),
    password: opt(c.password),
    tls,
    keepaliveMs: ms(c.keepalive, "60s", "s"),
    forwards: [],
    mountpoint,
    subscriptions: [],
    reconnectMs: Math.max(100, ms(c.reconnect_interval, "30s")),
    retryMs: Math.max(100, ms(c.retry_interval, "20s")),
    maxInflightBatches: 32,
    batchCount: batch,
    batchBytes: 1024 * 1024,
    replayqDir: on(c.disk_cache) ? join(d.dataDir, "bridges", id.replace(/[^A-Za-z0-9_-]/g, "_")) : undefined,
    replayqSegBytes: 10 * 1024 * 1024,
    maxQueueBytes: 1024 * 1024 * 1024,
    autoStart: true,
  };
}

function resourceType(name: "bridge_mqtt" | "bridge_rpc", d: BridgeResourceDeps): ResourceTypeDef {
  const mqtt = name === "bridge_mqtt";
  return {
    name,
    provider: "svc_bridge_mqtt",
    title: mqtt ? "MQTT Bridge" : "RPC Bridge",
    description: mqtt ? "MQTT Message Bridge" : "Bridge to a node of this broker",
    params: mqtt ? MQTT_PARAMS : RPC_PARAMS,
    validate(config) {
      try {
        resourceBridgeConfig("check", name, config, d);
        return null;
      } catch (err) {
        return (err as Error).message;
      }
    },
    create: (id, config) => new BridgeResource(id, name, new Bridge(resourceBridgeConfig(id, name, config, d), d.env)),
  };
}

export function bridgeResourceTypes(d: BridgeResourceDeps): ResourceTypeDef[] {
  return [resourceType("bridge_mqtt", d), resourceType("bridge_rpc", d)];
}

export const dataToMqttBrokerAction: ActionDef = {
  name: "data_to_mqtt_broker",
  app: "svc_bridge_mqtt",
  category: "data_forward",
  for: "message.publish",
  types: ["bridge_mqtt", "bridge_rpc"],
  title: "Data bridge to MQTT Broker",
  description: "Bridge Data to MQTT Broker",
  params: {
    $resource: {
      type: "string",
      required: true,
      title: "Resource ID",
      description: "Bind a resource to this action",
      order: 0,
    },
    forward_topic: p(
      "string",
      "Forward Topic",
      "Topic of the forwarded message (${var} allowed); empty: the original topic",
      {
        default: "",
        order: 1,
      },
    ),
    payload_tmpl: p("string", "Payload Template", "Payload template; empty: the selected data as JSON", {
      default: "",
      input: "textarea",
      order: 2,
    }),
  },
  create(params, ctx) {
    const topicText = str(params.forward_topic);
    const topic: Template | undefined = topicText === "" ? undefined : compileTemplate(topicText);
    const tmplText = str(params.payload_tmpl);
    const payload: Template = tmplText === "" ? (d) => jsonEncode(d) : compileTemplate(tmplText);
    return (data, event) => {
      const r = ctx.resource();
      if (!(r instanceof BridgeResource)) throw new ActionError("resource not available on this node");
      const qos = typeof event.qos === "number" ? (event.qos as QoS) : 0;
      const flags = event.flags as { retain?: boolean } | undefined;
      const to = topic === undefined ? String(event.topic ?? "") : topic(data);
      if (!validateTopicName(to, 0)) throw new ActionError(`cannot forward to topic ${JSON.stringify(to)}`);
      const msg = makeMessage({
        topic: to,
        payload: Buffer.from(payload(data)),
        qos,
        retain: flags?.retain === true,
      });
      const trace = ctx.env.traceHeaders();
      if (trace !== undefined) msg.headers = { ...trace };
      if (!r.bridge.enqueue(msg)) throw new ActionError("bridge stopped");
    };
  },
};
