import { describe, expect, it } from "vitest";
import { MessageQueue } from "../../src/broker/session/message-queue.ts";

describe("MessageQueue", () => {
  it("FIFO push/shift/peek on an unlimited queue", () => {
    const q = new MessageQueue<number>(0);
    expect(q.maxLen).toBe(0);
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
    expect(q.peek()).toBeUndefined();
    for (let i = 0; i < 5; i++) expect(q.push(i)).toBeUndefined();
    expect(q.length).toBe(5);
    expect(q.peek()).toBe(0);
    expect(q.shift()).toBe(0);
    expect(q.shift()).toBe(1);
    expect([...q]).toEqual([2, 3, 4]);
  });

  it("wraps around without growing", () => {
    const q = new MessageQueue<number>(0);
    const cap = q.capacity;
    let next = 0;
    let expected = 0;
    // keep ~cap/2 items in flight and push through many times the capacity
    for (let i = 0; i < cap / 2; i++) q.push(next++);
    for (let round = 0; round < cap * 5; round++) {
      q.push(next++);
      expect(q.shift()).toBe(expected++);
    }
    expect(q.capacity).toBe(cap);
    expect([...q]).toEqual(Array.from({ length: cap / 2 }, (_, i) => expected + i));
  });

  it("grows by doubling, preserving order across the wrap point", () => {
    const q = new MessageQueue<number>(0);
    const cap = q.capacity;
    for (let i = 0; i < cap; i++) q.push(i);
    for (let i = 0; i < cap / 2; i++) q.shift(); // head in the middle
    for (let i = cap; i < cap + cap / 2; i++) q.push(i); // wraps, now full
    expect(q.capacity).toBe(cap);
    q.push(cap + cap / 2); // forces growth with a wrapped buffer
    expect(q.capacity).toBe(cap * 2);
    expect([...q]).toEqual(Array.from({ length: cap + 1 }, (_, i) => cap / 2 + i));
    for (let i = 0; i < 1000; i++) q.push(1000 + i);
    expect(q.capacity).toBeGreaterThanOrEqual(q.length);
    expect(q.length).toBe(cap + 1 + 1000);
    expect(q.shift()).toBe(cap / 2);
  });

  it("grows up to the limit only (non power of two)", () => {
    const q = new MessageQueue<number>(50);
    for (let i = 0; i < 50; i++) expect(q.push(i)).toBeUndefined();
    expect(q.capacity).toBe(50);
    expect(q.length).toBe(50);
  });

  it("drops and returns the oldest item when full", () => {
    const q = new MessageQueue<string>(3);
    expect(q.maxLen).toBe(3);
    expect(q.push("a")).toBeUndefined();
    expect(q.push("b")).toBeUndefined();
    expect(q.push("c")).toBeUndefined();
    expect(q.push("d")).toBe("a");
    expect(q.push("e")).toBe("b");
    expect(q.length).toBe(3);
    expect([...q]).toEqual(["c", "d", "e"]);
    expect(q.shift()).toBe("c");
    expect(q.push("f")).toBeUndefined();
    expect(q.push("g")).toBe("d");
    expect([...q]).toEqual(["e", "f", "g"]);
  });

  it("drop-oldest after growth to a limit larger than the initial capacity", () => {
    const q = new MessageQueue<number>(40);
    for (let i = 0; i < 40; i++) q.push(i);
    for (let i = 40; i < 100; i++) expect(q.push(i)).toBe(i - 40);
    expect([...q]).toEqual(Array.from({ length: 40 }, (_, i) => 60 + i));
  });

  it("maxLen 1", () => {
    const q = new MessageQueue<number>(1);
    expect(q.push(1)).toBeUndefined();
    expect(q.push(2)).toBe(1);
    expect(q.push(3)).toBe(2);
    expect([...q]).toEqual([3]);
    expect(q.shift()).toBe(3);
    expect(q.length).toBe(0);
  });

  it("rejects an invalid maxLen", () => {
    expect(() => new MessageQueue(-1)).toThrow(RangeError);
    expect(() => new MessageQueue(1.5)).toThrow(RangeError);
    expect(() => new MessageQueue(Number.NaN)).toThrow(RangeError);
  });

  it("clear empties and shrinks", () => {
    const q = new MessageQueue<number>(0);
    for (let i = 0; i < 100; i++) q.push(i);
    q.clear();
    expect(q.length).toBe(0);
    expect(q.capacity).toBe(16);
    expect(q.shift()).toBeUndefined();
    expect([...q]).toEqual([]);
    q.push(7);
    expect([...q]).toEqual([7]);
  });

  it("removeWhere removes in place, keeps order, returns the count", () => {
    const q = new MessageQueue<number>(10);
    for (let i = 0; i < 10; i++) q.push(i);
    for (let i = 10; i < 14; i++) q.push(i); // wrapped: 4..13
    expect(q.removeWhere((x) => x % 3 === 0)).toBe(3); // 6, 9, 12
    expect([...q]).toEqual([4, 5, 7, 8, 10, 11, 13]);
    expect(q.length).toBe(7);
    expect(q.removeWhere(() => false)).toBe(0);
    expect(q.push(14)).toBeUndefined();
    expect(q.push(15)).toBeUndefined();
    expect(q.push(16)).toBeUndefined();
    expect(q.push(17)).toBe(4);
    expect([...q]).toEqual([5, 7, 8, 10, 11, 13, 14, 15, 16, 17]);
    expect(q.removeWhere(() => true)).toBe(10);
    expect(q.length).toBe(0);
    expect(q.shift()).toBeUndefined();
    expect(new MessageQueue<number>(0).removeWhere(() => true)).toBe(0);
  });

  it("removeWhere leaves the queue consistent if the predicate throws", () => {
    const q = new MessageQueue<number>(0);
    for (let i = 0; i < 8; i++) q.push(i);
    expect(() =>
      q.removeWhere((x) => {
        if (x === 5) throw new Error("boom");
        return x % 2 === 0;
      }),
    ).toThrow("boom");
    expect([...q]).toEqual([1, 3, 5, 6, 7]);
    expect(q.length).toBe(5);
  });

  it("matches a reference array under random operations", () => {
    let seed = 12345;
    const rnd = () => {
      seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
      return seed / 4294967296;
    };
    for (const limit of [0, 1, 7, 16, 33]) {
      const q = new MessageQueue<number>(limit);
      const ref: number[] = [];
      let n = 0;
      for (let i = 0; i < 5000; i++) {
        const r = rnd();
        if (r < 0.55) {
          const v = n++;
          const dropped = q.push(v);
          ref.push(v);
          if (limit > 0 && ref.length > limit) expect(dropped).toBe(ref.shift());
          else expect(dropped).toBeUndefined();
        } else if (r < 0.9) {
          expect(q.shift()).toBe(ref.shift());
        } else if (r < 0.95) {
          const m = Math.floor(rnd() * 5) + 2;
          const before = ref.length;
          const kept = ref.filter((x) => x % m !== 0);
          expect(q.removeWhere((x) => x % m === 0)).toBe(before - kept.length);
          ref.length = 0;
          ref.push(...kept);
        } else {
          expect(q.peek()).toBe(ref[0]);
        }
        expect(q.length).toBe(ref.length);
      }
      expect([...q]).toEqual(ref);
    }
  });
});
