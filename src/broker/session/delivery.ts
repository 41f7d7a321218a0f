// One message on its way to one subscriber: the message, the QoS it goes out with, the options
// of the subscription that matched (retain as published, subscription id, shared group) and
// whether it is a retained message sent because of a new subscription.

import type { Message, QoS, SubOpts } from "../types.ts";

export interface Delivery {
  msg: Message;
  qos: QoS;
  opts: SubOpts;
  /** Sent because of a subscription to a retained topic: the retain flag stays set [MQTT-3.3.1-8]. */
  retained: boolean;
}

/** Outgoing QoS 1/2 message waiting for its acknowledgement. */
export interface InflightEntry {
  d: Delivery;
  pid: number;
  /** 1: PUBLISH sent, waiting PUBACK/PUBREC. 2: PUBREL sent, waiting PUBCOMP. */
  phase: 1 | 2;
  sentAt: number;
}

/** The receiving end of a session: the channel while the client is connected. */
export interface SessionOutlet {
  readonly protoVer: number;
  /** Sends a PUBLISH; false when it cannot go out (larger than the client accepts). */
  sendPublish(d: Delivery, pid: number, dup: boolean): boolean;
  sendPubrel(pid: number): void;
  /** False while the socket's write buffer is over its high-water mark. */
  writable(): boolean;
}
