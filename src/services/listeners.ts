// Listener views for the API and CLI (spec 000 §2 "Listener"): the MQTT listeners and the HTTP
// management listeners of a node, each `{protocol, listen_on, acceptors, max_conns,
// current_conns, shutdown_count}`. Sources register themselves (the node's MQTT listeners at
// start, the management server once bound), so this layer knows no transport. A node's list is
// a call to that node (`mgmt.listeners`); the cluster form leaves out a node that does not answer.

import { type ClusterCalls, fromEvery } from "./cluster-calls.ts";

export interface ListenerRecord {
  protocol: string;
  listen_on: string;
  acceptors: number;
  max_conns: number;
  current_conns: number;
  /** `[]` when nothing was counted, else reason -> count. */
  shutdown_count: Record<string, number> | [];
}

export interface NodeListeners {
  node: string;
  listeners: ListenerRecord[];
}

/** Anything that reports listeners; ListenerInfo of listeners/types.ts fits. */
export type ListenerSource = () => readonly ListenerRecord[];

export class ListenerService {
  private readonly sources: ListenerSource[] = [];

  constructor(private readonly calls: ClusterCalls) {
    calls.register("mgmt.listeners", () => this.local());
  }

  addSource(src: ListenerSource): void {
    this.sources.push(src);
  }

  list(node: string): Promise<ListenerRecord[]> {
    return this.calls.call<ListenerRecord[]>(node, "mgmt.listeners", null);
  }

  /** This node's listeners. */
  local(): ListenerRecord[] {
    const out: ListenerRecord[] = [];
    for (const src of this.sources) {
      for (const l of src())
        out.push({
          protocol: l.protocol,
          listen_on: l.listen_on,
          acceptors: l.acceptors,
          max_conns: l.max_conns,
          current_conns: l.current_conns,
          shutdown_count: Object.keys(l.shutdown_count).length === 0 ? [] : { ...l.shutdown_count },
        });
    }
    return out;
  }

  async cluster(): Promise<NodeListeners[]> {
    const answers = await fromEvery<ListenerRecord[]>(this.calls, "mgmt.listeners", null);
    return answers.map((a) => ({ node: a.node, listeners: a.value }));
  }
}
