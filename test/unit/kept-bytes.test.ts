// KeptBytes: long-kept bytes apart from the short-lived Buffers around them.

import { describe, expect, it } from "vitest";
import { isKept, KeptBytes } from "../../src/mqtt/kept-bytes.ts";
import { fullCollection } from "../../src/sys/gc.ts";

/** A small Buffer as the message path makes them: a slice of Node's shared pool. */
const poolSlice = (n: number, fill: number) => Buffer.allocUnsafe(n).fill(fill);

describe("KeptBytes", () => {
  it("copies small pool slices into slabs of kept bytes only, one after the other", () => {
    const kept = new KeptBytes();
    const a = poolSlice(100, 1);
    const b = poolSlice(200, 2);
    const ka = kept.keep(a);
    const kb = kept.keep(b);
    expect(ka.equals(a)).toBe(true);
    expect(kb.equals(b)).toBe(true);
    expect(ka.buffer).not.toBe(a.buffer);
    expect([isKept(a), isKept(ka), isKept(kb)]).toEqual([false, true, true]);
    expect(kb.buffer).toBe(ka.buffer);
    expect(kb.byteOffset).toBe(ka.byteOffset + 100);
    // Kept bytes stay as they are, in this pool or another one.
    expect(kept.keep(ka)).toBe(ka);
    expect(new KeptBytes().keep(kb)).toBe(kb);
  });

  it("starts a new slab when the current one is full", () => {
    const kept = new KeptBytes();
    const first = kept.keep(poolSlice(3000, 1));
    kept.keep(poolSlice(3000, 2));
    const third = kept.keep(poolSlice(3000, 3));
    expect(third.buffer).not.toBe(first.buffer);
    expect(third.every((x) => x === 3)).toBe(true);
    expect(first.every((x) => x === 1)).toBe(true);
  });

  it("gives large views a buffer of their own, and keeps bytes that own theirs", () => {
    const kept = new KeptBytes();
    const read = Buffer.alloc(64 * 1024, 5);
    const view = read.subarray(1000, 6000);
    const own = kept.keep(view);
    expect(own.buffer.byteLength).toBe(5000);
    expect(own.equals(view)).toBe(true);
    expect(kept.keep(own)).toBe(own);
    const whole = Buffer.allocUnsafeSlow(300);
    expect(kept.keep(whole)).toBe(whole);
    const empty = kept.keep(read.subarray(7, 7));
    expect(empty.length).toBe(0);
    expect(empty.buffer.byteLength).toBe(0);
  });

  it("kept among short-lived traffic, a small payload holds its own bytes, not the pool slab it came in", () => {
    const kept = new KeptBytes();
    const hold: Buffer[] = [];
    const count = 2000;
    fullCollection();
    const before = process.memoryUsage().arrayBuffers;
    for (let i = 0; i < count; i++) {
      // 50 short-lived Buffers of 100 bytes (the traffic), then one that is kept: each kept pool
      // slice would keep most of an 8 KB slab.
      for (let j = 0; j < 50; j++) poolSlice(100, j);
      hold.push(kept.keep(poolSlice(100, i & 0xff)));
    }
    fullCollection();
    const perKept = (process.memoryUsage().arrayBuffers - before) / count;
    expect(perKept).toBeLessThan(200);
    expect(hold[count - 1][0]).toBe((count - 1) & 0xff);
  });
});
