import { describe, expect, it } from "vitest";
import { WorkQueue } from "../../src/rules/engine/queue.ts";

const idle = () => new Promise<void>((r) => setImmediate(r));

async function settle(q: { readonly length: number }): Promise<void> {
  while (q.length > 0) await idle();
}

describe("WorkQueue", () => {
  it("hands every entry over once, in order, across batches", async () => {
    const seen: [number, string][] = [];
    const q = new WorkQueue<number, string>(100_000, (a, b) => seen.push([a, b]), { batch: 7 });
    for (let i = 0; i < 50; i++) expect(q.push(i, `v${i}`)).toBe(true);
    expect(q.length).toBe(50);
    await idle();
    // One batch per turn of the event loop.
    expect(seen.length).toBe(7);
    await settle(q);
    expect(seen).toEqual(Array.from({ length: 50 }, (_, i) => [i, `v${i}`]));
  });

  it("starts a turn once the callback that pushed returns and its ticks ran, before the next immediate", async () => {
    const order: string[] = [];
    const q = new WorkQueue<number, null>(100, (a) => order.push(`entry ${a}`));
    // As a socket read: a callback of the event loop routes publishes (ticks flush the writes).
    await new Promise<void>((done) =>
      setImmediate(() => {
        setImmediate(() => {
          order.push("next immediate");
          done();
        });
        process.nextTick(() => order.push("tick"));
        q.push(1, null);
        q.push(2, null);
        order.push("pushed");
      }),
    );
    expect(order).toEqual(["pushed", "tick", "entry 1", "entry 2", "next immediate"]);
  });

  it("runs what a handler queues in a later turn, after the immediates already waiting (I/O in between)", async () => {
    const order: string[] = [];
    let q: WorkQueue<number, null>;
    q = new WorkQueue<number, null>(100, (a) => {
      order.push(`entry ${a}`);
      if (a < 3) q.push(a + 1, null);
    });
    await new Promise<void>((done) =>
      setImmediate(() => {
        q.push(1, null);
        setImmediate(() => order.push("immediate"));
        setImmediate(() => setImmediate(() => setImmediate(done)));
      }),
    );
    expect(order).toEqual(["entry 1", "immediate", "entry 2", "entry 3"]);
  });

  it("ends a turn once over its time budget (checked every 64 entries) and reports each turn", async () => {
    const seen: number[] = [];
    let turns = 0;
    const slow = (a: number) => {
      seen.push(a);
      const until = performance.now() + 0.1;
      while (performance.now() < until);
    };
    const q = new WorkQueue<number, null>(100_000, slow, { budgetMs: 2, afterTurn: () => turns++ });
    for (let i = 0; i < 300; i++) q.push(i, null);
    await idle();
    expect([seen.length, turns, q.length]).toEqual([63, 1, 237]);
    await settle(q);
    expect(seen).toEqual([...Array(300).keys()]);
    expect(turns).toBe(5);
  });

  it("runs the oldest entries at once on runNow, in order, and reports it as a turn", async () => {
    const seen: number[] = [];
    let turns = 0;
    const q = new WorkQueue<number, null>(4, (a) => seen.push(a), { afterTurn: () => turns++ });
    for (let i = 0; i < 4; i++) q.push(i, null);
    expect(q.push(4, null)).toBe(false);
    q.runNow(2);
    expect([seen, turns, q.length]).toEqual([[0, 1], 1, 2]);
    expect(q.push(4, null)).toBe(true);
    await settle(q);
    expect(seen).toEqual([0, 1, 2, 3, 4]);
    expect(turns).toBe(2);
  });

  it("refuses a push beyond its limit and takes pushes again once drained", async () => {
    const seen: number[] = [];
    const q = new WorkQueue<number, null>(3, (a) => seen.push(a));
    expect([1, 2, 3, 4].map((i) => q.push(i, null))).toEqual([true, true, true, false]);
    await settle(q);
    expect(q.push(5, null)).toBe(true);
    await settle(q);
    expect(seen).toEqual([1, 2, 3, 5]);
  });

  it("keeps entries pushed while draining", async () => {
    const seen: number[] = [];
    let q: WorkQueue<number, null>;
    q = new WorkQueue<number, null>(
      100_000,
      (a) => {
        seen.push(a);
        if (a < 3) q.push(a + 1000, null);
      },
      { batch: 5000 },
    );
    for (let i = 0; i < 12_000; i++) q.push(i, null);
    await settle(q);
    const expected = [...Array(12_000).keys(), 1000, 1001, 1002];
    expect(seen).toEqual(expected);
    // After a full drain the queue starts again from empty.
    q.push(7, null);
    await settle(q);
    expect(seen.at(-1)).toBe(7);
  });

  it("keeps order when a full queue is run in part again and again (entries wrap around its ring)", () => {
    const seen: number[] = [];
    const q = new WorkQueue<number, string>(5, (a, b) => {
      expect(b).toBe(`v${a}`);
      seen.push(a);
    });
    let next = 0;
    for (let round = 0; round < 40; round++) {
      while (q.push(next, `v${next}`)) next++;
      expect(q.length).toBe(5);
      q.runNow(1 + (round % 3));
    }
    q.runNow(5);
    expect(q.length).toBe(0);
    expect(seen).toEqual([...Array(next).keys()]);
  });

  it("stops handing over when a handler clears it", async () => {
    const seen: number[] = [];
    let q: WorkQueue<number, null>;
    q = new WorkQueue<number, null>(100, (a) => {
      seen.push(a);
      if (a === 2) q.clear();
    });
    for (let i = 0; i < 5; i++) q.push(i, null);
    await idle();
    expect(seen).toEqual([0, 1, 2]);
    expect(q.length).toBe(0);
  });
});
