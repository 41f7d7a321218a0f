// One svc node: the broker core, its plugins, listeners and service layer, assembled from a
// validated Config. main.ts (the process entry) and the tests both start nodes through this.

import type { Broker } from "./broker/broker.ts";
import type { Config, ZoneConfig } from "./config/index.ts";
import type { Listener } from "./listeners/listener.ts";
import type { ListenerInfo } from "./listeners/types.ts";
import type { PluginRegistry } from "./plugins/registry.ts";
import type { Retainer } from "./retainer/retainer.ts";
import type { ClientService } from "./services/clients.ts";
import type { PublishService } from "./services/publish.ts";
import type { SubscriptionService } from "./services/subscriptions.ts";
import type { RootLogger } from "./telemetry/logger.ts";

export interface Services {
  clients: ClientService;
  subscriptions: SubscriptionService;
  publish: PublishService;
}

/** A running node, as wired by main.ts's startNode(). */
export interface SvcNode {
  readonly config: Config;
  readonly logger: RootLogger;
  readonly broker: Broker;
  readonly plugins: PluginRegistry;
  readonly retainer: Retainer;
  readonly services: Services;
  readonly listeners: readonly Listener[];
  /** Port actually bound by the first listener of `kind` (tests start everything on port 0). */
  port(kind: "tcp" | "ssl" | "ws" | "wss"): number;
  listenerInfo(): ListenerInfo[];
  stop(): Promise<void>;
}

export type { ZoneConfig };
