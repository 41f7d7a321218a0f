// The router's per-topic cache of wildcard matches: a topic published before a wildcard filter
// was added or removed is matched afresh afterwards; subscribers joining an existing filter need
// no new match; topics beyond the cache's bound still match.
import { describe, expect, it } from "vitest";
import { Router } from "../../src/broker/router/router.ts";
import { QOS0 as opts, publishTo as pub, recordingSubscriber as sub } from "../helpers/router-subscriber.ts";

describe("Router wildcard match cache", () => {
  it("follows wildcard filters added and removed after a topic was matched", () => {
    const r = new Router();
    const a = sub("a");
    const b = sub("b");
    const c = sub("c");
    r.add("s/+/t", a, opts, undefined);
    expect(pub(r, "s/1/t")).toBe(1);
    r.add("s/#", b, opts, undefined);
    expect(pub(r, "s/1/t")).toBe(2);
    r.add("s/+/t", c, opts, undefined); // same filter, new subscriber
    expect(pub(r, "s/1/t")).toBe(3);
    r.remove("s/#", b, undefined);
    expect(pub(r, "s/1/t")).toBe(2);
    r.remove("s/+/t", a, undefined);
    r.remove("s/+/t", c, undefined);
    expect(pub(r, "s/1/t")).toBe(0);
    r.add("s/+/t", a, opts, undefined); // a new entry object for the same filter
    expect(pub(r, "s/1/t")).toBe(1);
    expect(a.got).toHaveLength(5);
    expect(b.got).toHaveLength(2);
    expect(c.got).toHaveLength(2);
  });

  it("matches topics beyond the cache's bound", () => {
    const r = new Router();
    const a = sub("a");
    r.add("w/#", a, opts, undefined);
    let n = 0;
    for (let i = 0; i < 20_000; i++) n += pub(r, `w/${i}`);
    for (let i = 0; i < 100; i++) n += pub(r, `w/${i}`);
    expect(n).toBe(20_100);
    expect(pub(r, "x/1")).toBe(0);
  });
});
