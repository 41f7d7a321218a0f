// One message on its way to one subscriber: the message, the QoS it goes out with, the options
// of the subscription that matched (retain as published, subscription id, shared group) and
// whether it is a retained message sent because of a new subscription.

import { type Message, makeMessage, type QoS, type SubOpts } from "../types.ts";

export interface Delivery {
  msg: Message;
  qos: QoS;
  opts: SubOpts;
  /** Sent because of a subscription to a retained topic: the retain flag stays set [MQTT-3.3.1-8]. */
  retained: boolean;
}

/** Outgoing QoS 1/2 message waiting for its acknowledgement. */
export interface InflightEntry {
  /** ENDED once the exchange is over (Session.endInflight). */
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

/**
 * What an inflight entry holds once its exchange is over: nothing of the message. V8 rehashes the
 * table of a Map that has outlived young collections (a session's inflight window) into old space,
 * and each table it leaves behind keeps the entries it held until the next full collection; an
 * entry that kept its delivery would keep the payload that long, and with it the socket read the
 * payload views. Under a flood of 16 KB QoS 1 publishes that made every read buffer outlive the
 * young collections, freed only by the mark-compacts V8 ran for its external memory every
 * 100-150 ms.
 */
export const ENDED: Delivery = {
  msg: makeMessage({ topic: "", payload: Buffer.alloc(0), qos: 0, retain: false, now: 0 }),
  qos: 0,
  opts: { qos: 0, nl: false, rap: false, rh: 0, subId: 0, share: undefined },
  retained: false,
};
