// Retained stores: wildcard lookup (with the `$` rule and `a/#` matching `a`; against matchTopic on
// random topics and filters), delete pruning, the cursor's depth-first order and its walk while
// the store changes, and the disc store's log replay and compaction across reopen.
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeMessage } from "../../src/broker/types.ts";
import { matchTopic } from "../../src/mqtt/topic.ts";
import { DiscRetainedStore } from "../../src/retainer/disc-store.ts";
import { MemoryRetainedStore } from "../../src/retainer/memory-store.ts";
import { mulberry32 } from "../helpers/prng.ts";

const msg = (topic: string, payload = "x") =>
  makeMessage({ topic, payload: Buffer.from(payload), qos: 1, retain: true, from: "c" });

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe.each([
  ["memory", () => new MemoryRetainedStore()],
  [
    "disc",
    () => {
      const d = mkdtempSync(join(tmpdir(), "svc-ret-"));
      dirs.push(d);
      return new DiscRetainedStore(d);
    },
  ],
])("%s retained store", (_name, make) => {
  it("matches filters", async () => {
    const s = make();
    for (const t of ["a", "a/b", "a/b/c", "a/x/c", "$SYS/a", "b"]) s.put(msg(t));
    const topics = (f: string) =>
      s
        .match(f)
        .map((m) => m.topic)
        .sort();
    expect(topics("a/#")).toEqual(["a", "a/b", "a/b/c", "a/x/c"]);
    expect(topics("#")).toEqual(["a", "a/b", "a/b/c", "a/x/c", "b"]);
    expect(topics("+/b")).toEqual(["a/b"]);
    expect(topics("a/+/c")).toEqual(["a/b/c", "a/x/c"]);
    expect(topics("$SYS/#")).toEqual(["$SYS/a"]);
    expect(topics("b")).toEqual(["b"]);
    expect(s.delete("a/b")).toBe(true);
    expect(topics("a/#")).toEqual(["a", "a/b/c", "a/x/c"]);
    await s.close();
  });

  it("finds what matchTopic matches, for random topics and filters", async () => {
    const s = make();
    const r = mulberry32(42);
    const word = () => ["a", "b", "c", "", "$x"][Math.floor(r() * 5)];
    const path = (levels: () => string) => Array.from({ length: 1 + Math.floor(r() * 4) }, levels).join("/");
    const all = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const t = path(word);
      all.add(t);
      s.put(msg(t));
    }
    for (let i = 0; i < 300; i++) {
      let f = path(() => ["a", "b", "", "+", "$x"][Math.floor(r() * 5)]);
      if (r() < 0.4) f = f === "" ? "#" : `${f}/#`;
      const want = [...all].filter((t) => matchTopic(f, t)).sort();
      expect(
        s
          .match(f)
          .map((m) => m.topic)
          .sort(),
        f,
      ).toEqual(want);
    }
    await s.close();
  });

  it("walks depth first in insertion order, and goes on walking while the store changes", async () => {
    const s = make();
    for (const t of ["a", "a/b", "a/x/c", "a/b/c", "a/b/d", "b"]) s.put(msg(t));
    expect(s.match("a/#").map((m) => m.topic)).toEqual(["a", "a/b", "a/b/c", "a/b/d", "a/x/c"]);
    const c = s.cursor("a/#");
    expect([c.next()?.topic, c.next()?.topic]).toEqual(["a", "a/b"]);
    // Removed before the walk reached it: not seen; put in a level not yet walked to its end: seen.
    s.delete("a/x/c");
    s.put(msg("a/b/e"));
    s.put(msg("a/y"));
    const rest: (string | undefined)[] = [];
    for (let m = c.next(); m !== undefined; m = c.next()) rest.push(m.topic);
    expect(rest).toEqual(["a/b/c", "a/b/d", "a/b/e", "a/y"]);
    expect(c.next()).toBeUndefined();
    await s.close();
  });
});

describe("disc retained store", () => {
  it("replays puts, replacements and deletes after reopening", async () => {
    const d = mkdtempSync(join(tmpdir(), "svc-ret-"));
    dirs.push(d);
    const s = new DiscRetainedStore(d);
    s.put(msg("t/1", "one"));
    s.put(msg("t/2", "two"));
    s.put(msg("t/1", "uno"));
    s.delete("t/2");
    const m = makeMessage({
      topic: "t/3",
      payload: Buffer.from([0, 1, 2]),
      qos: 2,
      retain: true,
      properties: { contentType: "bin", correlationData: Buffer.from("cd"), userProperties: { k: "v" } },
    });
    s.put(m);
    await s.close();
    const again = new DiscRetainedStore(d);
    expect(again.topics().sort()).toEqual(["t/1", "t/3"]);
    expect(again.get("t/1")?.payload.toString()).toBe("uno");
    const t3 = again.get("t/3");
    expect(t3?.payload).toEqual(Buffer.from([0, 1, 2]));
    expect(t3?.qos).toBe(2);
    expect(t3?.properties?.correlationData).toEqual(Buffer.from("cd"));
    expect(t3?.properties?.userProperties).toEqual({ k: "v" });
    await again.close();
  });

  it("writes a turn's records at its end, and a store opened after that reads them without a close", async () => {
    const d = mkdtempSync(join(tmpdir(), "svc-ret-"));
    dirs.push(d);
    const log = join(d, "retained.log");
    const s = new DiscRetainedStore(d);
    const before = statSync(log).size;
    for (let i = 0; i < 50; i++) s.put(msg(`burst/${i}`, `v${i}`));
    s.delete("burst/7");
    expect(statSync(log).size).toBe(before);
    await new Promise((r) => setImmediate(r));
    expect(statSync(log).size).toBeGreaterThan(before);
    // The first store is never closed (a process that died after the turn).
    const again = new DiscRetainedStore(d);
    expect(again.size).toBe(49);
    expect(again.get("burst/42")?.payload.toString()).toBe("v42");
    await again.close();
    await s.close();
  });

  it("compacts a log of several megabytes and reads every message back", async () => {
    const d = mkdtempSync(join(tmpdir(), "svc-ret-"));
    dirs.push(d);
    const s = new DiscRetainedStore(d);
    const big = (i: number) => Buffer.alloc(8192, i & 0xff);
    for (let i = 0; i < 400; i++) s.put(makeMessage({ topic: `big/${i}`, payload: big(i), qos: 0, retain: true }));
    await s.close();
    // Opening compacts: 400 records of 8 KB, written in pieces of about a megabyte.
    const again = new DiscRetainedStore(d);
    await again.close();
    const third = new DiscRetainedStore(d);
    expect(third.size).toBe(400);
    for (const i of [0, 127, 128, 399]) expect(third.get(`big/${i}`)?.payload.equals(big(i)), `big/${i}`).toBe(true);
    await third.close();
  });
});
