// A filter's plain subscribers: one is held without a Map, two or more in one; through every
// change (one -> two -> one -> none -> one, an update of the options) each subscriber gets each
// message once with its own options, and route listeners hear the first subscriber and the last.
import { describe, expect, it } from "vitest";
import { Router, type Subscriber } from "../../src/broker/router/router.ts";
import { makeMessage, type SubOpts } from "../../src/broker/types.ts";
import { QOS0 } from "../helpers/router-subscriber.ts";

function subscriber(id: string) {
  const got: number[] = [];
  const s: Subscriber = {
    clientId: id,
    subscriptions: new Map(),
    isOnline: () => true,
    deliver: (_m, o) => void got.push(o.qos),
  };
  return { s, got };
}

const qos = (q: 0 | 1 | 2): SubOpts => ({ ...QOS0, qos: q });
const publish = (r: Router, topic: string) =>
  r.dispatch(makeMessage({ topic, payload: Buffer.alloc(0), qos: 2, retain: false }), "random");

describe("router entries", () => {
  it("delivers with each subscriber's options as a filter goes from one subscriber to two and back", () => {
    const r = new Router();
    const events: string[] = [];
    r.addListener({ routeAdded: (f) => events.push(`+${f}`), routeRemoved: (f) => events.push(`-${f}`) });
    const a = subscriber("a");
    const b = subscriber("b");
    r.add("t/1", a.s, qos(1), undefined);
    expect(publish(r, "t/1")).toBe(1);
    r.add("t/1", a.s, qos(2), undefined); // an update, not a second subscriber
    expect(publish(r, "t/1")).toBe(1);
    r.add("t/1", b.s, qos(0), undefined);
    expect(publish(r, "t/1")).toBe(2);
    expect(r.remove("t/1", a.s, undefined)).toBe(true);
    expect(r.remove("t/1", a.s, undefined)).toBe(false);
    expect(publish(r, "t/1")).toBe(1);
    r.add("t/1", a.s, qos(1), undefined);
    expect(publish(r, "t/1")).toBe(2);
    r.remove("t/1", b.s, undefined);
    r.remove("t/1", a.s, undefined);
    expect(publish(r, "t/1")).toBe(0);
    expect(r.hasRoute("t/1")).toBe(false);
    r.add("t/1", b.s, qos(2), undefined);
    expect(publish(r, "t/1")).toBe(1);
    expect(a.got).toEqual([1, 2, 2, 1]);
    expect(b.got).toEqual([0, 0, 0, 2]);
    expect(events).toEqual(["+t/1", "-t/1", "+t/1"]);
    expect(r.subscriptionCount).toBe(1);
  });
});
