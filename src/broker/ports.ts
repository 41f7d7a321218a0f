// Interfaces the core owns and the outside implements: the cluster forwards messages to other
// nodes through ClusterPort, and learns local route changes through RouteListener (router.ts).
// On a single node the NullCluster forwards nothing.

import type { ClientInfo, Message, QoS, SubOpts } from "./types.ts";

/**
 * Something that can hold back publishers' acknowledgements until it has caught up: a congested
 * subscriber session, or the link to a node whose queue is full (ingress back-pressure).
 */
export interface AckHolder {
  holdAck(release: () => void): void;
}

/** A session moving from one node to another (a client id connected elsewhere). */
export interface SessionTransfer {
  expiryInterval: number;
  subscriptions: [string, SubOpts][];
  /** Messages still owed to the client, oldest first (unacknowledged ones are sent again). */
  pending: { msg: Message; qos: QoS; opts: SubOpts; retained: boolean }[];
}

export interface ClusterPort {
  /** Sends `msg` to every other node with a matching route; returns how many nodes. */
  forward(msg: Message): number;
  /**
   * Before a session opens here: if another node holds this client id's session, it takes it
   * away from there (kicking that connection) and hands it over (null when none, or when
   * `cleanStart` discards it).
   */
  claimSession?(clientId: string, cleanStart: boolean): Promise<SessionTransfer | null>;
}

export const NullCluster: ClusterPort = {
  forward: () => 0,
};

/** TracingPort.publish(): the message is not traced; the caller routes it. */
export const UNTRACED = -1;

/**
 * Message tracing (set by the tracing feature when `telemetry.tracing = on`, null otherwise: one
 * null check per publish and per 5.0 delivery). A traced message carries its span context as
 * `headers.traceparent`/`headers.tracestate`, which the cluster forwards with it.
 */
export interface TracingPort {
  /**
   * Runs a publish (hooks and routing, `route`) inside the message's receive span and answers its
   * deliveries, or UNTRACED without running it when the sampler drops the span: the broker then
   * routes the message itself, on the same path as with tracing off. `received`: a PUBLISH an
   * MQTT client sent, whose trace is its own traceparent's or a new one (never the node's active
   * context, which only internal publishers such as the API and rules run in).
   */
  publish(msg: Message, route: (msg: Message) => number, received: boolean): number;
  /** Runs the local dispatch of a message another node forwarded inside a dispatch span. */
  dispatch(msg: Message, run: (msg: Message) => number): number;
  /** The message to send to `node`, its headers carrying a forward span's context. */
  forward(msg: Message, node: string): Message;
  /**
   * One delivery of `msg` (a deliver span when traced): the trace context its PUBLISH carries (as
   * `traceparent`/`tracestate` user properties) when `carrier` (a 5.0 subscriber) and the message
   * is traced, null otherwise.
   */
  deliver(msg: Message, client: ClientInfo, qos: QoS, carrier: boolean): DeliveryTrace | null;
}

/**
 * The W3C trace context of one traced delivery, as the fields of a version 00 `traceparent` (so
 * that a delivery's PUBLISH bytes are patched with its span id, not serialized again) and the
 * `tracestate` when there is one.
 */
export interface DeliveryTrace {
  /** 32 lowercase hex digits. */
  readonly traceId: string;
  /** 16 lowercase hex digits. */
  readonly spanId: string;
  readonly traceFlags: number;
  readonly tracestate: string | undefined;
}
