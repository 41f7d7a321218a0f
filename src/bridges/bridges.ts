// The bridge plugin (`svc_bridge_mqtt`): loading it reads `svc_bridge_mqtt.conf`, makes one bridge
// per name and starts those with `start_type = auto`; every local publish is offered to the bridges
// (hook `message.publish`, after the features that may change or drop it). Unloading stops them.
// Start/stop and the forwards and subscriptions added at run time last until the plugin is
// unloaded (the configuration file is what a restart reads).
// Every node answers `bridge.publish` calls, so that an RPC bridge of another node can forward to
// it whether or not it loads the plugin itself.

import type { Broker } from "../broker/broker.ts";
import { type Message, makeMessage, nextSeq } from "../broker/types.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import type { Plugin } from "../plugins/registry.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { Tracing } from "../telemetry/tracing.ts";
import { BRIDGE_HEADER, Bridge, type BridgeEnv } from "./bridge.ts";
import { BRIDGE_PLUGIN, type BridgeConfig, loadBridgeConf } from "./bridge-conf.ts";
import { BridgeTracing } from "./bridge-tracing.ts";
import { MqttConnector } from "./mqtt-connector.ts";
import { messagesOfCall, RPC_PUBLISH, RpcConnector, type RpcPort } from "./rpc-connector.ts";

const OWNER = "bridges";

export interface BridgesDeps {
  broker: Broker;
  etcDir: string;
  nodeName: string;
  logger: Logger;
  tracing: Tracing | null;
}

export class Bridges implements Plugin {
  readonly name = BRIDGE_PLUGIN;
  readonly version = "4.4.0";
  readonly description = "MQTT bridges to remote brokers and RPC bridges to nodes of this broker";
  readonly type = "bridge" as const;
  private readonly bridges = new Map<string, Bridge>();
  private rpc: RpcPort | undefined;
  /** What bridges need from the node (the bridge resources of the rule engine share it). */
  readonly env: BridgeEnv;
  private loaded = false;

  constructor(private readonly deps: BridgesDeps) {
    const logger = deps.logger.child({ component: "bridge" });
    this.env = {
      logger,
      tracing: deps.tracing === null ? null : new BridgeTracing(deps.tracing, deps.nodeName),
      publish: (m, headers) => {
        const msg = makeMessage(m);
        msg.headers = headers;
        deps.broker.publish(msg);
      },
      connector: (cfg, onRefused) => this.connectorOf(cfg, onRefused),
    };
  }

  /** The cluster calls (known once the node's cluster part is built): RPC bridges send through them. */
  useRpc(rpc: RpcPort & { register(method: string, handler: (args: unknown) => unknown): void }): void {
    this.rpc = rpc;
    rpc.register(RPC_PUBLISH, (args) => {
      for (const m of messagesOfCall(args)) {
        const msg: Message = {
          ...m,
          seq: nextSeq(),
          headers: { [BRIDGE_HEADER]: (args as { bridge: string }).bridge },
        };
        this.deps.broker.publish(msg);
      }
      return null;
    });
    if (this.loaded) this.startAuto();
  }

  load(): void {
    const configs = loadBridgeConf(this.deps.etcDir, this.deps.nodeName);
    for (const cfg of configs) this.bridges.set(cfg.name, new Bridge(cfg, this.env));
    // A bridge forwards no system message (Bridge.matches).
    this.deps.broker.hooks.add("message.publish", (msg: Message) => this.offer(msg), PRIORITY.bridges, OWNER, {
      ignoresSystem: true,
    });
    this.loaded = true;
    // RPC bridges need the cluster calls; before useRpc() the auto bridges wait for it.
    if (this.rpc !== undefined) this.startAuto();
  }

  /** Starts the `start_type = auto` bridges; one that cannot (its cache) is logged and stays Stopped. */
  private startAuto(): void {
    for (const b of this.bridges.values()) {
      if (!b.cfg.autoStart) continue;
      try {
        b.start();
      } catch (err) {
        this.env.logger.error({ err, bridge: b.name }, "bridge cannot start");
      }
    }
  }

  async unload(): Promise<void> {
    this.loaded = false;
    this.deps.broker.hooks.removeOwner(OWNER);
    const all = [...this.bridges.values()];
    this.bridges.clear();
    await Promise.all(all.map((b) => b.dispose()));
  }

  list(): Bridge[] {
    return [...this.bridges.values()];
  }

  get(name: string): Bridge | undefined {
    return this.bridges.get(name);
  }

  private offer(msg: Message): undefined {
    for (const b of this.bridges.values()) {
      try {
        b.offer(msg);
      } catch (err) {
        // The cache failed (disk full, no descriptor): this bridge loses the message, the others not.
        b.dropOnError(err);
      }
    }
    return undefined;
  }

  private connectorOf(cfg: BridgeConfig, onRefused: (topic: string, reason: string) => void) {
    return cfg.kind === "mqtt" ? new MqttConnector(cfg, onRefused) : new RpcConnector(cfg, () => this.rpc);
  }
}
