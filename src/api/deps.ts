// What the API needs from the node: the service layer (types only: the API never reaches the
// broker), the page limit and a logger. main.ts assembles it.

import type { AclService } from "../services/acl.ts";
import type { AppService } from "../services/apps.ts";
import type { AuthEntryService } from "../services/auth-entries.ts";
import type { BannedService } from "../services/banned.ts";
import type { BridgeService } from "../services/bridges.ts";
import type { ClientService } from "../services/clients.ts";
import type { ClusterService } from "../services/cluster.ts";
import type { DataService } from "../services/data.ts";
import type { ListenerService } from "../services/listeners.ts";
import type { LogService } from "../services/log.ts";
import type { MetricsService } from "../services/metrics.ts";
import type { NodeService } from "../services/nodes.ts";
import type { PluginService } from "../services/plugins.ts";
import type { PublishService } from "../services/publish.ts";
import type { RetainerService } from "../services/retainer.ts";
import type { RuleService } from "../services/rules.ts";
import type { SessionService } from "../services/sessions.ts";
import type { SubscriptionService } from "../services/subscriptions.ts";
import type { TraceService } from "../services/trace.ts";
import type { UserService } from "../services/users.ts";
import type { Tracing } from "../telemetry/tracing.ts";

export interface ApiServices {
  nodes: NodeService;
  clients: ClientService;
  sessions: SessionService;
  subscriptions: SubscriptionService;
  publish: PublishService;
  plugins: PluginService;
  listeners: ListenerService;
  metrics: MetricsService;
  apps: AppService;
  users: UserService;
  banned: BannedService;
  authClientid: AuthEntryService;
  authUsername: AuthEntryService;
  data: DataService;
  rules: RuleService;
  acl: AclService;
  cluster: ClusterService;
  log: LogService;
  trace: TraceService;
  bridges: BridgeService;
  retainer: RetainerService;
}

export interface ApiLogger {
  warn(obj: object, msg?: string): void;
  error(obj: object, msg?: string): void;
}

export interface ApiDeps {
  services: ApiServices;
  /** `management.max_row_limit`: default and largest page size. */
  maxRowLimit: number;
  logger: ApiLogger;
  /** A span per request when `telemetry.tracing = on`. */
  tracing?: Tracing | null;
}
