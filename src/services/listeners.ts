// Listener views for the API and CLI (spec 000 §2 "Listener"): the MQTT listeners and the HTTP
// management listeners of a node, each `{protocol, listen_on, acceptors, max_conns,
// current_conns, shutdown_count}`. Sources register themselves (the node's MQTT listeners at
// start, the management server once bound), so this layer knows no transport.

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

  constructor(private readonly nodes: () => string[]) {}

  addSource(src: ListenerSource): void {
    this.sources.push(src);
  }

  async list(_node: string): Promise<ListenerRecord[]> {
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
    return Promise.all(this.nodes().map(async (node) => ({ node, listeners: await this.list(node) })));
  }
}
