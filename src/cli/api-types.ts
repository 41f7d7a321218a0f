// The answers of the management API that svc_ctl reads (the `data` of each envelope).

export interface NodeInfo {
  node_status: string;
  version: string;
  sysdescr: string;
  uptime: string;
  datetime: string;
}

export interface NodeStats {
  connections: number;
  load1: string;
  load5: string;
  load15: string;
  max_fds: number;
  memory_total: number;
  memory_used: number;
  process_available: number;
  process_used: number;
}

export interface Client {
  clientid: string;
  username: string | null;
  ip_address: string;
  port: number;
  clean_start: boolean;
  keepalive: number;
  expiry_interval: number;
  subscriptions_cnt: number;
  inflight: number;
  awaiting_rel: number;
  send_msg: number;
  mqueue_len: number;
  mqueue_dropped: number;
  connected: boolean;
  created_at: string;
  connected_at: string;
}

export interface Subscription {
  clientid: string;
  node: string;
  topic: string;
  qos: number;
}

export interface Route {
  topic: string;
  node: string;
}

export interface Plugin {
  name: string;
  version: string;
  description: string;
  active: boolean;
  type: string;
}

export interface Listener {
  protocol: string;
  listen_on: string;
  acceptors: number;
  max_conns: number;
  current_conns: number;
  shutdown_count: [] | Record<string, number>;
}

export interface ClusterStatus {
  running_nodes: string[];
  stopped_nodes: string[];
}

export interface App {
  app_id: string;
  name: string;
  desc: string;
  status: boolean;
  expired: number | "undefined";
}

export interface BackupFile {
  filename: string;
  size: number;
  created_at: string;
  node: string;
}

export interface Trace {
  type: "client" | "topic";
  name: string;
  file: string;
  level: string;
  started_at: string;
}

export interface BridgeSubscription {
  topic: string;
  qos: number;
}

export interface Bridge {
  name: string;
  kind: "mqtt" | "rpc";
  address: string;
  status: "Running" | "Connecting" | "Stopped";
  forwards: string[];
  subscriptions: BridgeSubscription[];
  queued: number;
  inflight: number;
  forwarded: number;
  received: number;
  dropped: number;
  refused: number;
}

/** Start, stop and the changes of a bridge's forwards and subscriptions: false when nothing changed. */
export interface BridgeChanged {
  changed: boolean;
}

export interface RuleAction {
  id: string;
  name: string;
  params: Record<string, unknown>;
  fallbacks: RuleAction[];
  metrics: Record<string, unknown>[];
}

export interface Rule {
  id: string;
  name?: string;
  for: string;
  rawsql: string;
  actions: RuleAction[];
  description: string;
  enabled: boolean;
  on_action_failed: string;
  created_at: number;
  metrics: Record<string, unknown>[];
}

export interface ActionDef {
  name: string;
  app: string;
  category: string;
  description: string;
  for: string;
  types: string[];
  title: string;
  params: Record<string, unknown>;
}

export interface ResourceType {
  name: string;
  provider: string;
  title: string;
  description: string;
  params: Record<string, unknown>;
}

export interface Resource {
  id: string;
  name: string;
  type: string;
  config: Record<string, unknown>;
  description: string;
  created_at: number;
  status: boolean | { node: string; is_alive: boolean }[];
}
