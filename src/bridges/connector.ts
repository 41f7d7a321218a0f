// What a bridge sends through: one connection (or its absence) to the other side. The bridge owns
// the queue, the batches and the reconnect timer; a connector only connects, sends and reports.

import type { Message, MessageProps, QoS } from "../broker/types.ts";

export interface ConnectorEvents {
  /** The connection is up: sends may begin. */
  up(): void;
  /** The connection failed or was lost (after up(), or instead of it); sends in flight failed. */
  down(reason: string): void;
  /** A message of a remote subscription (MQTT bridges). */
  message(topic: string, payload: Buffer, qos: QoS, retain: boolean, properties: MessageProps | undefined): void;
}

/** One message to send: the local message and the topic it goes out under (mountpoint applied). */
export interface Outgoing {
  msg: Message;
  topic: string;
  /** W3C trace context to carry (MQTT 5.0 user properties), when the send is traced. */
  trace?: Record<string, string>;
}

export interface Connector {
  /** Opens one connection; its outcome comes as up() or down(). */
  open(events: ConnectorEvents): void;
  /**
   * Sends a batch; `done` is called once, when the other side has every message (QoS 1/2
   * acknowledged, QoS 0 written), or with an error.
   */
  send(batch: readonly Outgoing[], done: (err?: Error) => void): void;
  subscribe(topic: string, qos: QoS): void;
  unsubscribe(topic: string): void;
  /** Closes the connection (no down() follows); sends in flight fail. */
  close(): Promise<void>;
}
