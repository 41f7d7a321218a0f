// The router's per-topic cache of wildcard matches: a topic published before a wildcard filter
// was added or removed is matched afresh afterwards; subscribers joining an existing filter need
// no new match; topics beyond the cache's bound still match. A filter forgets only the topics
// under its literal levels (WildCache), and random churn of filters never leaves a stale match.
import { describe, expect, it } from "vitest";
import { Router } from "../../src/broker/router/router.ts";
import { WildCache } from "../../src/broker/router/wild-cache.ts";
import { matchTopic } from "../../src/mqtt/topic.ts";
import { mulberry32 } from "../helpers/prng.ts";
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

  it("never delivers by a stale match while random wildcard filters come and go", () => {
    const rnd = mulberry32(7);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)];
    const levels = ["a", "b", "c", ""];
    const level = () => pick(levels);
    const filters: string[] = [];
    for (const f of ["#", "+", "+/#", "a/#", "a/+", "a/+/c", "a/b/#", "a/b/+", "b/#", "/#", "a//#"]) filters.push(f);
    for (let i = 0; i < 40; i++) {
      const parts = [level(), rnd() < 0.3 ? "+" : level()];
      if (rnd() < 0.6) parts.push(rnd() < 0.4 ? "#" : rnd() < 0.5 ? "+" : level());
      filters.push(parts.join("/"));
    }
    const wild = filters.filter((f) => f.includes("+") || f.includes("#"));
    const topics: string[] = [];
    for (let i = 0; i < 60; i++) {
      const n = 1 + Math.floor(rnd() * 4);
      topics.push(Array.from({ length: n }, level).join("/"));
    }
    const r = new Router();
    const s = sub("s");
    const on = new Set<string>();
    for (let i = 0; i < 20_000; i++) {
      if (rnd() < 0.1) {
        const f = pick(wild);
        if (on.has(f)) {
          r.remove(f, s, undefined);
          on.delete(f);
        } else {
          r.add(f, s, opts, undefined);
          on.add(f);
        }
      } else {
        const t = pick(topics);
        let want = 0;
        for (const f of on) if (matchTopic(f, t)) want++;
        expect(pub(r, t), `${t} with ${[...on].join(" ")}`).toBe(want);
      }
    }
  });
});

describe("WildCache", () => {
  const filled = () => {
    const c = new WildCache<string>(100);
    for (const t of ["dev/1/tele", "dev/1/cmd/x", "dev/2/tele", "dev", "dev/", "site/a", "x"]) c.set(t, [t]);
    return c;
  };
  const cached = (c: WildCache<string>) =>
    ["dev/1/tele", "dev/1/cmd/x", "dev/2/tele", "dev", "dev/", "site/a", "x"].filter((t) => c.get(t) !== undefined);

  it("forgets the topics under a filter's first two literal levels", () => {
    const c = filled();
    c.forget("dev/1/cmd/#");
    expect(cached(c)).toEqual(["dev/2/tele", "dev", "dev/", "site/a", "x"]);
    c.forget("dev/9/+"); // no such group
    expect(cached(c)).toHaveLength(5);
    c.forget("dev//#"); // the empty second level is `dev/`
    expect(cached(c)).toEqual(["dev/2/tele", "dev", "site/a", "x"]);
    c.set("dev/3/tele", ["dev/3/tele"]); // filed as it comes, now that filters change
    c.forget("dev/3/#");
    expect(c.get("dev/3/tele")).toBeUndefined();
    expect(c.get("dev/2/tele")).toEqual(["dev/2/tele"]);
  });

  it("forgets the topics under a filter's one literal level, and all for a leading wildcard", () => {
    const c = filled();
    c.forget("dev/+/tele");
    expect(cached(c)).toEqual(["site/a", "x"]);
    const d = filled();
    d.forget("dev/#");
    expect(cached(d)).toEqual(["site/a", "x"]);
    const e = filled();
    e.forget("+/a");
    expect(cached(e)).toEqual([]);
    const f = filled();
    f.forget("#");
    expect(cached(f)).toEqual([]);
  });

  it("files a forgotten topic again when it is set again", () => {
    const c = filled();
    c.forget("dev/1/#");
    c.set("dev/1/tele", ["again"]);
    expect(c.get("dev/1/tele")).toEqual(["again"]);
    c.forget("dev/1/#");
    expect(c.get("dev/1/tele")).toBeUndefined();
    for (let i = 0; i < 1000; i++) {
      c.set("dev/1/tele", ["x"]);
      c.forget("dev/1/cmd/#");
    }
    expect(c.size).toBe(7); // the same entry each time
  });

  it("takes no new topic once full until as many lookups missed, then starts over", () => {
    const c = new WildCache<string>(3);
    for (const t of ["a", "b", "c"]) c.set(t, [t]);
    c.set("d", ["d"]);
    c.set("e", ["e"]);
    expect(c.get("d")).toBeUndefined();
    expect(c.size).toBe(3);
    c.set("a", ["a2"]); // a topic held is still updated
    expect(c.get("a")).toEqual(["a2"]);
    c.set("f", ["f"]); // the third miss: it starts over with it
    expect(c.size).toBe(1);
    expect(c.get("f")).toEqual(["f"]);
    expect(c.get("a")).toBeUndefined();
  });
});
