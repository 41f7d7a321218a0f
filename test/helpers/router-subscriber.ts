// A subscriber that records the topics it was given, and a QoS 0 publish straight into a Router:
// for the router's unit tests.
import type { Router, Subscriber } from "../../src/broker/router/router.ts";
import { makeMessage, type SubOpts } from "../../src/broker/types.ts";

export const QOS0: SubOpts = { qos: 0, nl: false, rap: false, rh: 0, subId: 0, share: undefined };

export type RecordingSubscriber = Subscriber & { got: string[]; subscriptions: Map<string, SubOpts> };

export function recordingSubscriber(id: string): RecordingSubscriber {
  const got: string[] = [];
  return { clientId: id, subscriptions: new Map(), isOnline: () => true, deliver: (m) => void got.push(m.topic), got };
}

/** Dispatches a QoS 0 message on `topic`; the number of deliveries. */
export function publishTo(r: Router, topic: string): number {
  return r.dispatch(makeMessage({ topic, payload: Buffer.alloc(0), qos: 0, retain: false }), "random");
}
