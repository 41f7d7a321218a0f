// One svc node: the broker core, its plugins, listeners and service layer, assembled from a
// validated Config. main.ts (the process entry) and the tests both start nodes through this.

import type { ManagementApi, ManagementListenerName } from "./api/index.ts";
import type { Broker } from "./broker/broker.ts";
import type { ClusterNode } from "./cluster/cluster-node.ts";
import type { ClusterStore } from "./cluster/store.ts";
import type { Config, ZoneConfig } from "./config/index.ts";
import type { Listener } from "./listeners/listener.ts";
import type { ListenerInfo } from "./listeners/types.ts";
import type { PluginRegistry } from "./plugins/registry.ts";
import type { Retainer } from "./retainer/retainer.ts";
import type { RuleEngine } from "./rules/engine/engine.ts";
import type { AclService } from "./services/acl.ts";
import type { AppService } from "./services/apps.ts";
import type { AuthEntryService } from "./services/auth-entries.ts";
import type { BannedService } from "./services/banned.ts";
import type { BridgeService } from "./services/bridges.ts";
import type { ClientService } from "./services/clients.ts";
import type { ClusterService } from "./services/cluster.ts";
import type { DataService } from "./services/data.ts";
import type { ListenerService } from "./services/listeners.ts";
import type { LogService } from "./services/log.ts";
import type { MetricsService } from "./services/metrics.ts";
import type { NodeService } from "./services/nodes.ts";
import type { PluginService } from "./services/plugins.ts";
import type { PublishService } from "./services/publish.ts";
import type { RetainerService } from "./services/retainer.ts";
import type { RuleService } from "./services/rules.ts";
import type { SessionService } from "./services/sessions.ts";
import type { SubscriptionService } from "./services/subscriptions.ts";
import type { TraceService } from "./services/trace.ts";
import type { UserService } from "./services/users.ts";
import type { Sys } from "./sys/index.ts";
import type { RootLogger } from "./telemetry/logger.ts";

export interface Services {
  clients: ClientService;
  subscriptions: SubscriptionService;
  publish: PublishService;
  /** Metrics, statistics, alarms (API `/metrics`, `/stats`, `/alarms`). */
  metrics: MetricsService;
  /** Message traces (CLI `trace`). */
  trace: TraceService;
  /** MQTT and RPC bridges of this node (CLI `bridges`). */
  bridges: BridgeService;
  /** Log level at run time (CLI `log primary-level`). */
  log: LogService;
  /** Node info and statistics, lifecycle state (`/brokers`, `/nodes`, `/status`). */
  nodes: NodeService;
  /** Session views (v2 `/sessions`). */
  sessions: SessionService;
  /** Plugin views and load / unload / reload. */
  plugins: PluginService;
  /** MQTT and management listener views. */
  listeners: ListenerService;
  /** Management applications (v3/v4 API credentials). */
  apps: AppService;
  /** Dashboard users (v2 API credentials, `/users`). */
  users: UserService;
  /** Bans (`/banned`). */
  banned: BannedService;
  /** svc_auth_clientid credentials (`/auth_clientid`). */
  authClientid: AuthEntryService;
  /** svc_auth_username credentials (`/auth_username`). */
  authUsername: AuthEntryService;
  /** Data export/import and backup files (`/data/*`). */
  data: DataService;
  /** Rules, actions, resources (the rule engine's API). */
  rules: RuleService;
  /** ACL file reload, every client's ACL cache. */
  acl: AclService;
  /** Cluster membership: `cluster status`, `cluster force-leave` (CLI). */
  cluster: ClusterService;
  /** Retained messages of this node: `retainer info|topics|clean` (CLI). */
  retainer: RetainerService;
}

/** A running node, as wired by main.ts's startNode(). */
export interface SvcNode {
  readonly config: Config;
  readonly logger: RootLogger;
  readonly broker: Broker;
  readonly plugins: PluginRegistry;
  readonly retainer: Retainer;
  /** The rule engine runtime (plugin svc_rule_engine). */
  readonly rules: RuleEngine;
  /** Statistics, $SYS publisher, alarms, sysmon, tracer. */
  readonly sys: Sys;
  readonly services: Services;
  /** The node's cluster store (embedded, or etcd when discovery is etcd). */
  readonly store: ClusterStore;
  /** Membership, routes and forwarding when the node is clustered (discovery = etcd), else null. */
  readonly cluster: ClusterNode | null;
  /** The management HTTP API (its Hono app answers `app.request()` in-process). */
  readonly api: ManagementApi;
  /** Bound port of a management listener; undefined when it is `off`. */
  managementPort(name: ManagementListenerName): number | undefined;
  readonly listeners: readonly Listener[];
  /** Port actually bound by the first listener of `kind` (tests start everything on port 0). */
  port(kind: "tcp" | "ssl" | "ws" | "wss"): number;
  listenerInfo(): ListenerInfo[];
  /**
   * Drains (SIGTERM): not ready, no new connections, clients sent elsewhere, sessions handed over
   * to other nodes for up to `node.drain_timeout`, then stops as stop() does.
   */
  drain(): Promise<void>;
  /** Stops at once (during a drain: ends it now). */
  stop(): Promise<void>;
}

export type { ZoneConfig };
