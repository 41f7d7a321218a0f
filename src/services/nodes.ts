// Node views for the API and CLI (spec 000 §2 "Node info", "Node statistics"): what each node
// says about itself, and the node's lifecycle state for the `/status` probe. Single node for now:
// `names()` is this node only, and every per-node call answers for it; the cluster issue makes
// `names()` the membership and the per-node calls remote, behind the same async signatures.
//
// Fields that name Erlang internals in the spec carry the nearest honest Node.js fact:
// - `otp_release`: the JavaScript runtime and its version (`Node.js v24.x.y`).
// - `max_fds`: the soft limit of open file descriptors the OS grants the process.
// - `process_available`: the handles the process may hold at once (that same descriptor limit:
//   every socket, file and pipe takes one); `process_used`: the descriptors open now.
// - `memory_total`: memory the process holds from the OS (resident set size), in bytes;
//   `memory_used`: memory in use by JavaScript (heap used plus external buffers), in bytes.

import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { nodeInfo, SYSDESCR, VERSION } from "../sys/node-info.ts";
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

  constructor(private readonly src: NodeSource) {}

  get local(): string {
    return this.src.nodeName;
  }

  get state(): NodeState {
    return this.current;
  }

  setState(s: NodeState): void {
    this.current = s;
  }

  /** Names of the nodes of the cluster (this node only until clustering lands). */
  names(): string[] {
    return [this.src.nodeName];
  }

  has(node: string): boolean {
    return this.names().includes(node);
  }

  /** The probe's one line: `Node <name> is started\nsvc is running` (or starting / draining). */
  statusText(): string {
    const what = this.current === "running" ? "running" : this.current === "starting" ? "starting" : "draining";
    return `Node ${this.src.nodeName} is started\n${SYSDESCR} is ${what}`;
  }

  async info(node: string): Promise<NodeInfoRecord> {
    const i = nodeInfo(this.src.startedAt);
    return {
      node,
      node_status: "Running",
      version: i.version,
      sysdescr: i.sysdescr,
      uptime: i.uptime,
      datetime: i.datetime,
      otp_release: OTP_RELEASE,
    };
  }

  async infos(): Promise<NodeInfoRecord[]> {
    return Promise.all(this.names().map((n) => this.info(n)));
  }

  async stats(node: string): Promise<NodeStatsRecord> {
    const now = Date.now();
    const [l1, l5, l15] = loadavg();
    const mem = process.memoryUsage();
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
      memory_total: mem.rss,
      memory_used: mem.heapUsed + mem.external,
      process_available: limit,
      process_used: openHandles(),
    };
  }

  async allStats(): Promise<NodeStatsRecord[]> {
    return Promise.all(this.names().map((n) => this.stats(n)));
  }
}

let cachedLimit: number | undefined;

/** Soft RLIMIT_NOFILE from /proc/self/limits (Linux); 0 where the OS does not tell. */
export function openFileLimit(): number {
  if (cachedLimit !== undefined) return cachedLimit;
  try {
    const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync("/proc/self/limits", "utf8"));
    cachedLimit = m === null ? 0 : m[1] === "unlimited" ? 2 ** 31 - 1 : Number(m[1]);
  } catch {
    cachedLimit = 0;
  }
  return cachedLimit;
}

/** Descriptors open now (/proc/self/fd), else the event loop's active resources. */
export function openHandles(): number {
  try {
    return readdirSync("/proc/self/fd").length;
  } catch {
    return process.getActiveResourcesInfo().length;
  }
}
