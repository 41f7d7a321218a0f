// Composition root: the only place that wires concrete implementations together. It turns the
// validated Config into the core's settings, builds the broker, registers the plugins, starts the
// listeners, and stops everything in order on SIGTERM/SIGINT.

import { mkdirSync } from "node:fs";
import { Broker } from "./broker/broker.ts";
import type { BrokerSettings, ZoneSettings } from "./broker/settings.ts";
import type { Config, ZoneConfig } from "./config/index.ts";
import { createListener } from "./listeners/create-listener.ts";
import type { Listener } from "./listeners/listener.ts";
import type { SvcNode } from "./node.ts";
import { PluginRegistry } from "./plugins/registry.ts";
import { Retainer } from "./retainer/retainer.ts";
import { ClientService } from "./services/clients.ts";
import { PublishService } from "./services/publish.ts";
import { SubscriptionService } from "./services/subscriptions.ts";
import { createLogger, type RootLogger } from "./telemetry/logger.ts";

/** Plugins loaded on a first start (before `<data_dir>/loaded_plugins` exists). */
const DEFAULT_PLUGINS = ["svc_retainer"];

export function zoneSettings(z: ZoneConfig): ZoneSettings {
  return {
    idleTimeout: z.idleTimeout,
    maxPacketSize: z.maxPacketSize,
    maxClientIdLen: z.maxClientidLen,
    maxTopicLevels: z.maxTopicLevels,
    maxQosAllowed: z.maxQosAllowed as 0 | 1 | 2,
    maxTopicAlias: z.maxTopicAlias,
    retainAvailable: z.retainAvailable,
    wildcardSubscription: z.wildcardSubscription,
    sharedSubscription: z.sharedSubscription,
    ignoreLoopDeliver: z.ignoreLoopDeliver,
    strictMode: z.strictMode,
    responseInformation: z.responseInformation,
    serverKeepalive: z.serverKeepalive,
    keepaliveBackoff: z.keepaliveBackoff,
    maxSubscriptions: z.maxSubscriptions,
    upgradeQos: z.upgradeQos,
    maxInflight: z.maxInflight,
    retryInterval: z.retryInterval,
    maxAwaitingRel: z.maxAwaitingRel,
    awaitRelTimeout: z.awaitRelTimeout,
    sessionExpiryInterval: z.sessionExpiryInterval,
    maxMqueueLen: z.maxMqueueLen,
    mqueueStoreQos0: z.mqueueStoreQos0,
    useUsernameAsClientid: z.useUsernameAsClientid,
    allowAnonymous: z.allowAnonymous,
    aclDenyAction: z.aclDenyAction,
  };
}

export function brokerSettings(config: Config): BrokerSettings {
  const zones = new Map<string, ZoneSettings>();
  const names = new Set(["external", "internal", ...config.listeners().map((l) => l.zone)]);
  for (const name of names) zones.set(name, zoneSettings(config.zone(name)));
  return {
    nodeName: config.get("node.name"),
    sharedStrategy: config.get("broker.shared_subscription_strategy"),
    zones,
    tickInterval: 1000,
  };
}

export interface StartOptions {
  logger?: RootLogger;
  /** Sweep period override (tests use a short one). */
  tickInterval?: number;
}

/** Builds and starts a node; on failure everything started so far is stopped again. */
export async function startNode(config: Config, opts: StartOptions = {}): Promise<SvcNode> {
  const nodeName = config.get("node.name");
  const logger = opts.logger ?? createLogger({ level: config.get("log.level"), node: nodeName });
  const dataDir = config.get("node.data_dir");
  mkdirSync(dataDir, { recursive: true });

  const settings = brokerSettings(config);
  if (opts.tickInterval !== undefined) settings.tickInterval = opts.tickInterval;
  const broker = new Broker(settings, logger);
  const plugins = new PluginRegistry(dataDir, logger);
  const retainer = new Retainer(broker, {
    storageType: config.get("retainer.storage_type"),
    maxRetainedMessages: config.get("retainer.max_retained_messages"),
    maxPayloadSize: config.get("retainer.max_payload_size"),
    expiryInterval: config.get("retainer.expiry_interval"),
    dataDir,
  });
  plugins.register(retainer);
  await plugins.loadAtStart(DEFAULT_PLUGINS);

  const listeners: Listener[] = [];
  broker.start();
  try {
    for (const l of config.listeners()) {
      const listener = createListener(
        {
          kind: l.kind,
          name: l.name,
          bind: l.bind,
          zone: l.zone,
          maxConnections: l.maxConnections,
          backlog: l.backlog,
          nodelay: l.nodelay,
          keyfile: l.keyfile,
          certfile: l.certfile,
          cacertfile: l.cacertfile,
          verify: l.verify,
          failIfNoPeerCert: l.failIfNoPeerCert,
          tlsVersions: l.tlsVersions,
          ciphers: l.ciphers?.join(":"),
          mqttPath: l.mqttPath,
          handshakeTimeout: l.handshakeTimeout,
          acceptors: l.acceptors,
        },
        broker.handleConnection,
        { dataDir, logger },
      );
      await listener.start();
      listeners.push(listener);
    }
  } catch (err) {
    for (const l of listeners) await l.stop();
    broker.stop();
    await plugins.stopAll();
    throw err;
  }

  const node: SvcNode = {
    config,
    logger,
    broker,
    plugins,
    retainer,
    services: {
      clients: new ClientService(broker),
      subscriptions: new SubscriptionService(broker),
      publish: new PublishService(broker),
    },
    listeners,
    port(kind) {
      const l = listeners.find((x) => x.protocol === `mqtt:${kind}`);
      if (l === undefined) throw new Error(`no ${kind} listener`);
      return l.port;
    },
    listenerInfo: () => listeners.map((l) => l.info()),
    async stop() {
      // DISCONNECT 0x8B to 5.0 clients first, then close the listeners and what they still hold.
      broker.stop();
      for (const l of listeners) await l.stop();
      await plugins.stopAll();
      logger.info({}, "node stopped");
    },
  };
  logger.info({ node: nodeName, dataDir }, "node started");
  return node;
}
