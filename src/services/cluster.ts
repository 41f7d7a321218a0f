// Cluster membership for the CLI (`cluster status`, `cluster force-leave <node>`): the running
// nodes and those that joined once and are not running now, as the family's `cluster status`
// shows them, and forgetting a stopped node. A single node is a cluster of one.
//
// `cluster join <node>` (manual discovery): the peer's cluster settings are recorded and the node
// restarts in it (its cluster-scoped data is then the cluster's); `cluster leave`: the record is
// removed and the node restarts on its own. Both answer before the restart begins.

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

/** Joining and leaving (main.ts adapts src/cluster/join.ts and the node's restart). */
export interface ClusterJoining {
  /** Records the cluster of `node` (reached at `address`, default its host and our link port). */
  join(node: string, address: string | undefined): Promise<void>;
  /** Forgets the joined cluster; false when the node did not join one. */
  leave(): boolean;
  /** Restarts the node with the new record (after the answer went out). */
  restart(): void;
  readonly discovery: string;
}

export type JoinOutcome = { ok: true } | { ok: false; error: string };

export class ClusterService {
  constructor(
    private readonly self: string,
    /** Null when the node is not clustered. */
    private readonly membership: ClusterMembership | null,
    private readonly joining: ClusterJoining | null = null,
  ) {}

  /** `cluster join <node>`: only for `cluster.discovery = manual`; the node restarts in that cluster. */
  async join(node: string, address?: string): Promise<JoinOutcome> {
    const j = this.joining;
    if (j === null || j.discovery !== "manual") return { ok: false, error: "cluster.discovery is not manual" };
    if (node === this.self) return { ok: false, error: "cannot join itself" };
    try {
      await j.join(node, address);
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    j.restart();
    return { ok: true };
  }

  /** `cluster leave`: the node restarts on its own (manual discovery). */
  leave(): JoinOutcome {
    const j = this.joining;
    if (j === null || j.discovery !== "manual") return { ok: false, error: "cluster.discovery is not manual" };
    if (!j.leave()) return { ok: false, error: "not in a cluster" };
    j.restart();
    return { ok: true };
  }

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
