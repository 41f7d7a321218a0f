import { describe, expect, it } from "vitest";
import { TopicTrie } from "../../src/broker/router/topic-trie.ts";
import { matchTopic } from "../../src/mqtt/topic.ts";
import { mulberry32 } from "../helpers/prng.ts";

function collect<V>(trie: TopicTrie<V>, topic: string): Array<[string, V]> {
  const out: Array<[string, V]> = [];
  trie.match(topic, (v, f) => out.push([f, v]));
  return out.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Independent, split-based reference matcher (MQTT 4.7). */
function refMatch(filter: string, topic: string): boolean {
  const f = filter.split("/");
  const t = topic.split("/");
  if (topic.startsWith("$") && (f[0] === "+" || f[0] === "#")) return false;
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return i === f.length - 1;
    if (i >= t.length) return false;
    if (f[i] !== "+" && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

describe("TopicTrie basics", () => {
  it("set/get/replace/size", () => {
    const t = new TopicTrie<number>();
    expect(t.size).toBe(0);
    t.set("a/+", 1);
    t.set("a/#", 2);
    t.set("#", 3);
    expect(t.size).toBe(3);
    expect(t.get("a/+")).toBe(1);
    expect(t.get("a/#")).toBe(2);
    expect(t.get("#")).toBe(3);
    expect(t.get("a")).toBeUndefined();
    expect(t.get("+")).toBeUndefined();
    expect(t.get("a/+/b")).toBeUndefined();
    t.set("a/+", 10);
    expect(t.size).toBe(3);
    expect(t.get("a/+")).toBe(10);
    expect(t.has("a/+")).toBe(true);
    expect(t.has("a")).toBe(false);
  });

  it("matches MQTT examples and visits each filter once", () => {
    const t = new TopicTrie<string>();
    const filters = [
      "sport/tennis/player1/#",
      "sport/#",
      "sport/tennis/+",
      "sport/+",
      "+/+",
      "/+",
      "+",
      "#",
      "+/tennis/#",
      "$SYS/#",
      "$SYS/monitor/+",
      "+/monitor/Clients",
    ];
    for (const f of filters) t.set(f, f);
    const run = (topic: string) => collect(t, topic).map(([f]) => f);
    expect(run("sport/tennis/player1")).toEqual(
      ["#", "+/tennis/#", "sport/#", "sport/tennis/+", "sport/tennis/player1/#"].sort(),
    );
    expect(run("sport")).toEqual(["#", "+", "sport/#"].sort());
    expect(run("sport/")).toEqual(["#", "+/+", "sport/#", "sport/+"].sort());
    expect(run("/finance")).toEqual(["#", "+/+", "/+"].sort());
    expect(run("$SYS/monitor/Clients")).toEqual(["$SYS/#", "$SYS/monitor/+"]);
    expect(run("$SYS")).toEqual(["$SYS/#"]);
    expect(run("$other")).toEqual([]);
  });

  it("match on an empty trie visits nothing", () => {
    const t = new TopicTrie<number>();
    let n = 0;
    t.match("a/b", () => n++);
    expect(n).toBe(0);
  });
});

describe("TopicTrie delete / prune", () => {
  it("deletes and prunes empty nodes", () => {
    const t = new TopicTrie<number>();
    const base = t.nodeCount();
    expect(base).toBe(1);
    t.set("a/b/+/d/#", 1);
    t.set("a/b/+", 2);
    t.set("+/x/#", 3);
    const full = t.nodeCount();
    expect(t.delete("a/b/+/d/#")).toBe(true);
    expect(t.delete("a/b/+/d/#")).toBe(false);
    expect(t.size).toBe(2);
    expect(t.get("a/b/+")).toBe(2);
    expect(t.nodeCount()).toBe(full - 2); // "d" and "#" pruned, "+" still holds a value
    expect(t.delete("a/b/+")).toBe(true);
    expect(t.nodeCount()).toBe(1 + 3); // root, "+", "x", "#"
    expect(t.delete("+/x/#")).toBe(true);
    expect(t.nodeCount()).toBe(base);
    expect(t.size).toBe(0);
  });

  it("keeps nodes that still lead to other filters", () => {
    const t = new TopicTrie<number>();
    t.set("a/+", 1);
    t.set("a/+/#", 2);
    t.set("a/#", 3);
    expect(t.delete("a/+")).toBe(true);
    expect(collect(t, "a/b/c")).toEqual([
      ["a/#", 3],
      ["a/+/#", 2],
    ]);
    expect(collect(t, "a/b")).toEqual([
      ["a/#", 3],
      ["a/+/#", 2],
    ]);
    expect(t.delete("a/#")).toBe(true);
    expect(collect(t, "a")).toEqual([]);
    expect(t.delete("a/+/#")).toBe(true);
    expect(t.nodeCount()).toBe(1);
  });

  it("delete of absent or prefix filters returns false", () => {
    const t = new TopicTrie<number>();
    t.set("a/b/+", 1);
    expect(t.delete("a")).toBe(false);
    expect(t.delete("a/b")).toBe(false);
    expect(t.delete("a/b/+/c")).toBe(false);
    expect(t.delete("x/#")).toBe(false);
    expect(t.delete("a/b/#")).toBe(false);
    expect(t.size).toBe(1);
    t.clear();
    expect(t.size).toBe(0);
    expect(t.nodeCount()).toBe(1);
  });
});

describe("TopicTrie vs matchTopic (property)", () => {
  const LEVELS = ["a", "b", "c", "", "$x", "$SYS", "aa"];
  function randomTopic(rnd: () => number): string {
    const n = 1 + Math.floor(rnd() * 4);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) parts.push(LEVELS[Math.floor(rnd() * LEVELS.length)]);
    return parts.join("/");
  }
  function randomFilter(rnd: () => number): string {
    const n = 1 + Math.floor(rnd() * 4);
    const parts: string[] = [];
    for (let i = 0; i < n; i++) {
      const r = rnd();
      if (i === n - 1 && r < 0.25) parts.push("#");
      else if (r < 0.55) parts.push("+");
      else parts.push(LEVELS[Math.floor(rnd() * LEVELS.length)]);
    }
    return parts.join("/");
  }

  it("matchTopic agrees with an independent reference matcher", () => {
    const rnd = mulberry32(0xc0ffee);
    for (let i = 0; i < 20000; i++) {
      const f = randomFilter(rnd);
      const t = randomTopic(rnd);
      if (matchTopic(f, t) !== refMatch(f, t)) {
        throw new Error(`mismatch filter=${JSON.stringify(f)} topic=${JSON.stringify(t)}`);
      }
    }
  });

  it.each([1, 2, 3, 42, 0xdeadbeef])("seed %d: match visits exactly the matching filters once", (seed) => {
    const rnd = mulberry32(seed);
    const trie = new TopicTrie<number>();
    const ref = new Map<string, number>();
    let cases = 0;
    for (let round = 0; round < 40; round++) {
      // mutate: add some, delete some
      for (let k = 0; k < 10; k++) {
        const f = randomFilter(rnd);
        const v = Math.floor(rnd() * 1000);
        trie.set(f, v);
        ref.set(f, v);
      }
      const keys = [...ref.keys()];
      for (let k = 0; k < 4 && keys.length > 0; k++) {
        const f = keys[Math.floor(rnd() * keys.length)];
        expect(trie.delete(f)).toBe(ref.delete(f));
      }
      expect(trie.size).toBe(ref.size);
      for (let q = 0; q < 25; q++) {
        const topic = randomTopic(rnd);
        const seen = new Map<string, number>();
        trie.match(topic, (v, f) => {
          expect(seen.has(f)).toBe(false);
          seen.set(f, v);
        });
        for (const [f, v] of ref) {
          const want = matchTopic(f, topic);
          if (want !== seen.has(f)) {
            throw new Error(`seed ${seed}: filter=${JSON.stringify(f)} topic=${JSON.stringify(topic)} want=${want}`);
          }
          if (want) expect(seen.get(f)).toBe(v);
        }
        expect(seen.size).toBe([...ref.keys()].filter((f) => matchTopic(f, topic)).length);
        cases++;
      }
    }
    expect(cases).toBe(1000);
    // Deleting everything prunes back to the root.
    for (const f of ref.keys()) expect(trie.delete(f)).toBe(true);
    expect(trie.size).toBe(0);
    expect(trie.nodeCount()).toBe(1);
  });
});
