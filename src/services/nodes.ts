// Node views for the API and CLI (spec 000 §2 "Node info", "Node statistics"): what each node
// says about itself, and the node's lifecycle state for the `/status` probe. `names()` are the
// running nodes of the cluster (this node alone when not clustered); `info`/`stats` of a node are
// calls to that node's own handlers (`mgmt.nodeInfo`, `mgmt.nodeStats`), and the lists gather them
// from every running node (one that does not answer is left out).
//
// Fields that name Erlang internals in the spec carry the nearest honest Node.js fact:
// - `otp_release`: the JavaScript runtime and its version (`Node.js v24.x.y`).
// - `max_fds`: the soft limit of open file descriptors the OS grants the process.
// - `process_available`: the handles the process may hold at once (that same descriptor limit:
//   every socket, file and pipe takes one); `process_used`: the descriptors open now.
// - `memory_total`: memory the process holds from the OS (resident set size), in bytes;
//   `memory_used`: memory in use by JavaScript (heap used plus external buffers), in bytes.

import { loadavg } from "node:os";
import { openFileLimit, openHandles } from "../sys/descriptors.ts";
import { nodeInfo, SYSDESCR, VERSION } from "../sys/node-info.ts";
import { jsMemory, residentBytes } from "../sys/process-memory.ts";
import { type ClusterCalls, fromEvery } from "./cluster-calls.ts";
import { formatUptime } from "./format.ts";

export type NodeState = "starting" | "running" | "draining";

/** `GET /brokers/{node}` (the list adds `node`). */
export interface NodeInfoRecord {
  node: string;
  node_status: string;
  version: string;
  sysdescr: string;
  uptime: string;
  datetime: string;
  otp_release: string;
}

/** `GET /nodes/{node}` with raw numbers (the API words memory with a unit in the list form). */
export interface NodeStatsRecord {
  node: string;
  name: string;
  node_status: string;
  version: string;
  uptime: string;
  otp_release: string;
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

/** What the node service reads from the running node. */
export interface NodeSource {
  readonly nodeName: string;
  readonly startedAt: number;
  connections(): number;
}

export const OTP_RELEASE = `Node.js ${process.version}`;

export class NodeService {
  /** This node's software version (package.json). */
  readonly version = VERSION;
  private current: NodeState = "starting";

  constructor(
    private readonly src: NodeSource,
    private readonly calls: ClusterCalls,
  ) {
    calls.register("mgmt.nodeInfo", () => this.localInfo());
    calls.register("mgmt.nodeStats", () => this.localStats());
  }

  get local(): string {
    return this.src.nodeName;
  }

  get state(): NodeState {
    return this.current;
  }

  setState(s: NodeState): void {
    this.current = s;
  }

  /** Names of the running nodes of the cluster, this one included. */
  names(): string[] {
    return this.calls.nodes();
  }

  has(node: string): boolean {
    return this.names().includes(node);
  }

  /** The probe's one line: `Node <name> is started\nsvc is running` (or starting / draining). */
  statusText(): string {
    const what = this.current === "running" ? "running" : this.current === "starting" ? "starting" : "draining";
    return `Node ${this.src.nodeName} is started\n${SYSDESCR} is ${what}`;
  }

  /** A node's info, as that node tells it. */
  info(node: string): Promise<NodeInfoRecord> {
    return this.calls.call<NodeInfoRecord>(node, "mgmt.nodeInfo", null);
  }

  /** Info of every running node that answers. */
  async infos(): Promise<NodeInfoRecord[]> {
    return (await fromEvery<NodeInfoRecord>(this.calls, "mgmt.nodeInfo", null)).map((a) => a.value);
  }

  /** A node's statistics, as that node tells them. */
  stats(node: string): Promise<NodeStatsRecord> {
    return this.calls.call<NodeStatsRecord>(node, "mgmt.nodeStats", null);
  }

  /** Statistics of every running node that answers. */
  async allStats(): Promise<NodeStatsRecord[]> {
    return (await fromEvery<NodeStatsRecord>(this.calls, "mgmt.nodeStats", null)).map((a) => a.value);
  }

  /** This node's info. */
  localInfo(): NodeInfoRecord {
    const i = nodeInfo(this.src.startedAt);
    return {
      node: this.src.nodeName,
      node_status: "Running",
      version: i.version,
      sysdescr: i.sysdescr,
      uptime: i.uptime,
      datetime: i.datetime,
      otp_release: OTP_RELEASE,
    };
  }

  /** This node's statistics. */
  localStats(): NodeStatsRecord {
    const node = this.src.nodeName;
    const now = Date.now();
    const [l1, l5, l15] = loadavg();
    const mem = jsMemory();
    const limit = openFileLimit();
    return {
      node,
      name: node,
      node_status: "Running",
      version: VERSION,
      uptime: formatUptime(now - this.src.startedAt),
      otp_release: OTP_RELEASE,
      connections: this.src.connections(),
      load1: l1.toFixed(2),
      load5: l5.toFixed(2),
      load15: l15.toFixed(2),
      max_fds: limit,
      memory_total: residentBytes(),
      memory_used: mem.heapUsed + mem.external,
      process_available: limit,
      process_used: openHandles(),
    };
  }
}
