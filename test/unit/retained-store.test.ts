// Retained stores: wildcard lookup (with the `$` rule and `a/#` matching `a`), delete pruning,
// and the disc store's log replay and compaction across reopen.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { makeMessage } from "../../src/broker/types.ts";
import { DiscRetainedStore } from "../../src/retainer/disc-store.ts";
import { MemoryRetainedStore } from "../../src/retainer/memory-store.ts";

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
});
