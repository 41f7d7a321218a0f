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
