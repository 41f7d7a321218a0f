// Topics starting with '$' reach filters starting with '$' only [MQTT-4.7.2-1]. The router counts
// those filters and skips routing a '$' topic while there are none: these cases check that the
// count follows filters added and removed (plain and shared, exact and wildcard), so a '$' filter
// never misses a message.
import { describe, expect, it } from "vitest";
import { Router, sharedKey } from "../../src/broker/router/router.ts";
import { QOS0 as opts, publishTo as pub, recordingSubscriber as sub } from "../helpers/router-subscriber.ts";

describe("Router: '$' topics", () => {
  it("reach '$' filters only, while any is subscribed", () => {
    const r = new Router();
    const all = sub("all");
    const plus = sub("plus");
    const sys = sub("sys");
    r.add("#", all, opts, undefined);
    r.add("+/brokers/#", plus, opts, undefined);
    expect(pub(r, "$SYS/brokers/n1/uptime")).toBe(0);
    r.add("$SYS/#", sys, opts, undefined);
    expect(pub(r, "$SYS/brokers/n1/uptime")).toBe(1);
    expect(pub(r, "a/brokers/x")).toBe(2);
    r.remove("$SYS/#", sys, undefined);
    expect(pub(r, "$SYS/brokers/n1/uptime")).toBe(0);
    expect(pub(r, "a/brokers/x")).toBe(2);
    expect(sys.got).toEqual(["$SYS/brokers/n1/uptime"]);
    expect(all.got).toEqual(["a/brokers/x", "a/brokers/x"]);
  });

  it("count filters, not subscribers: one '$' filter left keeps receiving", () => {
    const r = new Router();
    const a = sub("a");
    const b = sub("b");
    const c = sub("c");
    const exact = "$SYS/brokers/n1/clients/c1/connected";
    r.add("$SYS/brokers/+/clients/#", a, opts, undefined);
    r.add("$SYS/brokers/+/clients/#", b, opts, undefined);
    r.add(exact, c, opts, undefined);
    r.remove("$SYS/brokers/+/clients/#", a, undefined);
    expect(pub(r, exact)).toBe(2);
    r.remove("$SYS/brokers/+/clients/#", b, undefined);
    expect(pub(r, exact)).toBe(1);
    r.remove(exact, c, undefined);
    expect(pub(r, exact)).toBe(0);
    r.add(exact, c, opts, undefined);
    expect(pub(r, exact)).toBe(1);
    expect(c.got).toHaveLength(3);
  });

  it("count shared groups on a '$' filter", () => {
    const r = new Router();
    const m = sub("m");
    m.subscriptions.set(sharedKey("g", "$SYS/#"), opts);
    r.add("$SYS/#", m, opts, "g");
    expect(pub(r, "$SYS/brokers/n1/version")).toBe(1);
    r.remove("$SYS/#", m, "g");
    expect(pub(r, "$SYS/brokers/n1/version")).toBe(0);
    expect(m.got).toEqual(["$SYS/brokers/n1/version"]);
  });
});
