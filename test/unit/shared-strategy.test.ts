import { describe, expect, it } from "vitest";
import { fnv1a, SharedGroup } from "../../src/broker/router/shared-strategy.ts";

function group(names: string[], random?: () => number): SharedGroup<string> {
  const g = new SharedGroup<string>(random);
  for (const n of names) g.add(n, `key-${n}`);
  return g;
}

describe("SharedGroup membership", () => {
  it("add/remove/size/members/has/keyOf", () => {
    const g = group(["a", "b", "c", "d"]);
    expect(g.size).toBe(4);
    g.add("b", "other"); // no duplicate, key updated
    expect(g.size).toBe(4);
    expect(g.keyOf("b")).toBe("other");
    expect(g.remove("b")).toBe(true);
    expect(g.remove("b")).toBe(false);
    expect(g.has("b")).toBe(false);
    expect(g.size).toBe(3);
    expect([...g.members()].sort()).toEqual(["a", "c", "d"]);
    expect(g.keyOf("d")).toBe("key-d");
    expect(g.remove("d")).toBe(true); // last element
    expect(g.remove("a")).toBe(true);
    expect([...g.members()]).toEqual(["c"]);
    expect(g.keyOf("c")).toBe("key-c");
    expect(g.remove("c")).toBe(true);
    expect(g.size).toBe(0);
  });

  it("members() is a snapshot", () => {
    const g = group(["a", "b", "c"]);
    for (const m of g.members()) g.remove(m);
    expect(g.size).toBe(0);
  });

  it("pick on an empty group is undefined for every strategy", () => {
    const g = new SharedGroup<string>();
    for (const s of ["random", "round_robin", "sticky", "hash"] as const) {
      expect(g.pick(s, "c", "t")).toBeUndefined();
    }
  });
});

describe("SharedGroup strategies", () => {
  it("random picks members only, with a spread", () => {
    let seed = 7;
    const rnd = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    const g = group(["a", "b", "c"], rnd);
    const counts = new Map<string, number>();
    for (let i = 0; i < 3000; i++) {
      const m = g.pick("random", "pub", "t") as string;
      counts.set(m, (counts.get(m) ?? 0) + 1);
    }
    expect([...counts.keys()].sort()).toEqual(["a", "b", "c"]);
    for (const c of counts.values()) expect(c).toBeGreaterThan(800);
  });

  it("random with a degenerate rng stays in range", () => {
    const g = group(["a", "b"], () => 0.9999999999999999);
    expect(["a", "b"]).toContain(g.pick("random", "p", "t"));
  });

  it("round_robin cycles through all members", () => {
    const g = group(["a", "b", "c"]);
    const picks = Array.from({ length: 7 }, () => g.pick("round_robin", "p", "t"));
    expect(picks).toEqual(["a", "b", "c", "a", "b", "c", "a"]);
  });

  it("round_robin keeps going after removals and skips rejected members", () => {
    const g = group(["a", "b", "c", "d"]);
    expect(g.pick("round_robin", "p", "t")).toBe("a");
    g.remove("a"); // d moves into slot 0: [d, b, c]
    const picks = Array.from({ length: 6 }, () => g.pick("round_robin", "p", "t"));
    expect(new Set(picks)).toEqual(new Set(["b", "c", "d"]));
    const offline = new Set(["c"]);
    const accept = (m: string) => !offline.has(m);
    const seq = Array.from({ length: 6 }, () => g.pick("round_robin", "p", "t", accept));
    expect(seq).not.toContain("c");
    // alternates between the two accepted members, no repeats in a row
    for (let i = 1; i < seq.length; i++) expect(seq[i]).not.toBe(seq[i - 1]);
  });

  it("sticky sticks until the member is removed", () => {
    const g = group(["a", "b", "c"]);
    const first = g.pick("sticky", "p1", "t1") as string;
    for (let i = 0; i < 20; i++) expect(g.pick("sticky", `p${i}`, `t${i}`)).toBe(first);
    g.add("z", "key-z");
    expect(g.pick("sticky", "p", "t")).toBe(first);
    g.remove(first);
    const second = g.pick("sticky", "p", "t") as string;
    expect(second).not.toBe(first);
    expect(g.has(second)).toBe(true);
    for (let i = 0; i < 20; i++) expect(g.pick("sticky", "p", "t")).toBe(second);
  });

  it("sticky moves on when the sticky member is not accepted", () => {
    const g = group(["a", "b", "c"]);
    const first = g.pick("sticky", "p", "t") as string;
    const next = g.pick("sticky", "p", "t", (m) => m !== first) as string;
    expect(next).not.toBe(first);
    expect(g.pick("sticky", "p", "t")).toBe(next);
    expect(g.pick("sticky", "p", "t", () => false)).toBeUndefined();
  });

  it("hash is stable per publisher client id and spreads clients", () => {
    const g = group(["a", "b", "c", "d"]);
    const seen = new Set<string>();
    for (let c = 0; c < 50; c++) {
      const id = `client-${c}`;
      const m = g.pick("hash", id, "t/1");
      for (let i = 0; i < 5; i++) expect(g.pick("hash", id, `t/${i}`)).toBe(m);
      seen.add(m as string);
    }
    expect(seen.size).toBe(4);
    // same answer from an identically built group
    const g2 = group(["a", "b", "c", "d"]);
    for (let c = 0; c < 50; c++) expect(g2.pick("hash", `client-${c}`, "x")).toBe(g.pick("hash", `client-${c}`, "y"));
  });

  it("hash uses the topic when the client id is empty", () => {
    const g = group(["a", "b", "c", "d", "e"]);
    const members = ["a", "b", "c", "d", "e"];
    expect(g.pick("hash", "", "some/topic")).toBe(members[fnv1a("some/topic") % 5]);
    expect(g.pick("hash", "cid", "some/topic")).toBe(members[fnv1a("cid") % 5]);
  });

  it("fnv1a known vectors", () => {
    expect(fnv1a("")).toBe(0x811c9dc5);
    expect(fnv1a("a")).toBe(0xe40c292c);
    expect(fnv1a("foobar")).toBe(0xbf9cf968);
  });

  it("accept skips to the next members in order; undefined when none accepts", () => {
    const g = group(["a", "b", "c", "d"]);
    const members = ["a", "b", "c", "d"];
    const h = fnv1a("pub") % 4;
    const chosen = members[h];
    const expectedNext = members[(h + 1) % 4];
    expect(g.pick("hash", "pub", "t")).toBe(chosen);
    expect(g.pick("hash", "pub", "t", (m) => m !== chosen)).toBe(expectedNext);
    expect(g.pick("hash", "pub", "t", (m) => m === members[(h + 3) % 4])).toBe(members[(h + 3) % 4]);
    for (const s of ["random", "round_robin", "sticky", "hash"] as const) {
      expect(g.pick(s, "pub", "t", () => false)).toBeUndefined();
      expect(g.pick(s, "pub", "t", (m) => m === "c")).toBe("c");
    }
  });
});
