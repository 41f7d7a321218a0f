// The RPC bridge's connection: forwarding only, to another node of this broker over the cluster's
// inter-node link. The bridge is up while its node is running in the cluster (Connecting until it
// is); a batch is one call (`bridge.publish`) that the node answers once it has published every
// message (routed through its cluster as a client's PUBLISH would be). A failed call, or the node
// leaving the cluster, takes the connection as lost.

import type { Message, QoS } from "../broker/types.ts";
import { fromWire, toWire, type WireMessage } from "../cluster/message-wire.ts";
import type { BridgeConfig } from "./bridge-conf.ts";
import type { Connector, ConnectorEvents, Outgoing } from "./connector.ts";

export const RPC_PUBLISH = "bridge.publish";

/** The cluster calls an RPC bridge needs (the services' ClusterCalls has them). */
export interface RpcPort {
  readonly self: string;
  nodes(): string[];
  call<T>(node: string, method: string, args: unknown): Promise<T>;
}

interface PublishArgs {
  bridge: string;
  messages: WireMessage[];
}

/** How often an open connection checks that its node is still running. */
const WATCH_MS = 500;

export class RpcConnector implements Connector {
  private events: ConnectorEvents | undefined;
  private watch: NodeJS.Timeout | undefined;

  constructor(
    private readonly cfg: BridgeConfig,
    /** The cluster calls; undefined while the node is starting (the connection then waits). */
    private readonly rpcOf: () => RpcPort | undefined,
  ) {}

  /**
   * Up once the node runs in the cluster (checked now and every WATCH_MS: a bridge started with
   * the node waits for the cluster to form, not for a reconnect interval), down once it leaves.
   */
  open(events: ConnectorEvents): void {
    this.events = events;
    let up = false;
    const check = () => {
      if (this.events !== events) return;
      const running = this.running();
      if (running && !up) {
        up = true;
        events.up();
      } else if (!running && up) this.lost(events, `node ${this.cfg.address} left the cluster`);
    };
    this.watch = setInterval(check, WATCH_MS);
    this.watch.unref();
    queueMicrotask(check);
  }

  private running(): boolean {
    return this.rpcOf()?.nodes().includes(this.cfg.address) === true;
  }

  /** Reports the connection lost once (the events of a closed or replaced connection are dropped). */
  private lost(events: ConnectorEvents, reason: string): void {
    if (this.events !== events) return;
    this.events = undefined;
    clearInterval(this.watch);
    events.down(reason);
  }

  send(batch: readonly Outgoing[], done: (err?: Error) => void): void {
    const events = this.events;
    const args: PublishArgs = { bridge: this.cfg.name, messages: batch.map(wireOf) };
    const rpc = this.rpcOf();
    if (rpc === undefined) {
      done(new Error("not connected"));
      return;
    }
    rpc.call(this.cfg.address, RPC_PUBLISH, args).then(
      () => done(),
      (err: Error) => {
        done(err);
        if (events !== undefined) this.lost(events, err.message);
      },
    );
  }

  subscribe(_topic: string, _qos: QoS): void {}

  unsubscribe(_topic: string): void {}

  async close(): Promise<void> {
    this.events = undefined;
    clearInterval(this.watch);
  }
}

function wireOf(o: Outgoing): WireMessage {
  const w = toWire(o.msg);
  w.topic = o.topic;
  if (o.trace !== undefined) {
    const up = (w.props?.userProperties ?? {}) as Record<string, unknown>;
    w.props = { ...w.props, userProperties: { ...up, ...o.trace } };
  }
  return w;
}

/** The receiving node's side: the messages of one `bridge.publish` call, ready to publish. */
export function messagesOfCall(args: unknown): Message[] {
  const a = args as PublishArgs;
  if (typeof a !== "object" || a === null || !Array.isArray(a.messages))
    throw new Error("bad bridge.publish arguments");
  return a.messages.map(fromWire);
}
