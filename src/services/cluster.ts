// Cluster membership for the CLI (`cluster status`, `cluster force-leave <node>`): the running
// nodes and those that joined once and are not running now, as the family's `cluster status`
// shows them, and forgetting a stopped node. A single node is a cluster of one.
//
// Not implemented yet: `cluster join <node>` and `cluster leave` for `cluster.discovery = manual`
// (a manual node adopting a peer's cluster, or leaving it). Only discovery = etcd forms clusters.

/** What the service needs from the cluster's membership (main.ts adapts ClusterNode). */
export interface ClusterMembership {
  /** Running nodes, this one included. */
  running(): string[];
  /** Nodes that joined once and are not running now. */
  stopped(): Promise<string[]>;
  /** Forgets a stopped node: it is no longer listed. */
  forget(node: string): Promise<void>;
}

export interface ClusterStatus {
  running_nodes: string[];
  stopped_nodes: string[];
}

/** `running`: only a stopped node can be forced out; `not_found`: no such stopped node. */
export type ForceLeaveOutcome = "ok" | "running" | "not_found";

export class ClusterService {
  constructor(
    private readonly self: string,
    /** Null when the node is not clustered. */
    private readonly membership: ClusterMembership | null,
  ) {}

  async status(): Promise<ClusterStatus> {
    if (this.membership === null) return { running_nodes: [this.self], stopped_nodes: [] };
    const running = this.membership.running();
    return {
      running_nodes: running.length === 0 ? [this.self] : running,
      stopped_nodes: await this.membership.stopped(),
    };
  }

  /** `cluster force-leave <node>`: forgets a stopped node. */
  async forceLeave(node: string): Promise<ForceLeaveOutcome> {
    if (node === this.self) return "running";
    if (this.membership === null) return "not_found";
    if (this.membership.running().includes(node)) return "running";
    if (!(await this.membership.stopped()).includes(node)) return "not_found";
    await this.membership.forget(node);
    return "ok";
  }
}
