// The heap trim: one full memory-reducing collection once the heap grew by node.heap_trim_growth
// and the node went quiet; never while it allocates, never without growth, at most once per
// MIN_SPACING. The policy runs on scripted heap readings; the collection itself is V8's (real).
// A node (in this process) trims after a burst of connections.

import { getHeapStatistics } from "node:v8";
import { describe, expect, it } from "vitest";
import { fullCollection } from "../../src/sys/gc.ts";
import { type HeapReading, HeapTrim, MIN_SPACING, QUIET_BYTES } from "../../src/sys/heap-trim.ts";
import { silentLogger } from "../../src/telemetry/logger.ts";
import { connect, useNode } from "../conformance/helpers.ts";
import { waitUntil } from "../helpers/wait.ts";

const MB = 1024 * 1024;

/** A trimmer over scripted readings: `at(committed, used)` sets what the next check reads. */
function scripted(growth: number) {
  let reading: HeapReading = { committed: 40 * MB, used: 30 * MB };
  let collections = 0;
  const trim = new HeapTrim(
    { growth },
    silentLogger(),
    () => {
      collections++;
      reading = { committed: reading.committed - 10 * MB, used: reading.used - 5 * MB };
    },
    () => reading,
  );
  return {
    trim,
    at(committed: number, used: number) {
      reading = { committed: committed * MB, used: used * MB };
    },
    get collections() {
      return collections;
    },
  };
}

describe("heap trim policy", () => {
  it("trims once the heap grew and a check period was quiet, then measures growth from there", () => {
    const s = scripted(32 * MB);
    s.trim.start();
    s.trim.stop();
    s.at(60, 40); // +20 MB: not enough growth
    expect(s.trim.check(1_000)).toBe(false);
    s.at(80, 60); // +40 MB, but 20 MB allocated since the last check: busy
    expect(s.trim.check(2_000)).toBe(false);
    s.at(80, 60.5); // quiet now
    expect(s.trim.check(3_000)).toBe(true);
    expect(s.collections).toBe(1);
    expect(s.trim.count).toBe(1);
    // The base is the heap after the trim (70 MB): 32 MB more is not half of it, much later.
    s.at(102, 56);
    expect(s.trim.check(3_000 + 2 * MIN_SPACING)).toBe(false);
    s.at(105, 56.2);
    expect(s.trim.check(3_000 + 3 * MIN_SPACING)).toBe(true);
    expect(s.collections).toBe(2);
  });

  it("does not count a period with a collection in it as quiet", () => {
    const s = scripted(32 * MB);
    s.trim.start();
    s.trim.stop();
    s.at(80, 20); // used fell: a collection ran, the allocation of the period is unknown
    expect(s.trim.check(1_000)).toBe(false);
    s.at(80, 20 + QUIET_BYTES / MB / 2);
    expect(s.trim.check(2_000)).toBe(true);
  });

  it("keeps MIN_SPACING between trims", () => {
    const s = scripted(10 * MB);
    s.trim.start();
    s.trim.stop();
    s.at(70, 40);
    s.trim.check(1_000);
    s.at(70, 40);
    expect(s.trim.check(2_000)).toBe(true);
    s.at(100, 40);
    s.trim.check(3_000);
    s.at(100, 40);
    expect(s.trim.check(1_000 + MIN_SPACING)).toBe(false);
    expect(s.trim.check(2_000 + MIN_SPACING)).toBe(true);
  });

  it("is off at 0: no check ever runs a collection", () => {
    const s = scripted(0);
    s.trim.start();
    s.at(1000, 60);
    expect(s.trim.check(1_000)).toBe(false);
    expect(s.trim.check(2_000)).toBe(false); // quiet, grown: still nothing
    expect(s.collections).toBe(0);
  });

  it("runs V8's memory-reducing collection: garbage goes, the committed heap does not grow", () => {
    let garbage: object[] | null = Array.from({ length: 300_000 }, (_, i) => ({ i, s: `x${i}` }));
    const withGarbage = getHeapStatistics();
    expect(garbage.length).toBe(300_000);
    garbage = null;
    fullCollection();
    const after = getHeapStatistics();
    expect(after.used_heap_size).toBeLessThan(withGarbage.used_heap_size - 10 * MB);
    expect(after.total_heap_size).toBeLessThanOrEqual(withGarbage.total_heap_size);
  });
});

describe("heap trim in a node", () => {
  const node = useNode({ "node.heap_trim_growth": "1MB" });

  it("trims after a burst of connections once the node is quiet", async () => {
    const n = node();
    const before = n.sys.heapTrim.count;
    await Promise.all(Array.from({ length: 200 }, (_, i) => connect(n, 4, { clientId: `trim-${i}` })));
    // The test process's heap was large at the start: 64 MB more held here make the growth certain.
    let held: number[][] | null = Array.from({ length: 8 }, () => new Array(1_000_000).fill(0.5));
    await waitUntil(() => n.sys.heapTrim.count > before, "a heap trim", 10_000);
    expect(held.length).toBe(8);
    held = null;
  });
});
