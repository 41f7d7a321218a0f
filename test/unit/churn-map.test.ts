// ChurnMap: answers as a Map does for any sequence of operations (its order aside: a key that comes
// back keeps its place), a key deleted and set again reuses its entry, and dead entries are swept
// once they outnumber the live ones.
import { describe, expect, it } from "vitest";
import { ChurnMap } from "../../src/broker/churn-map.ts";
import { mulberry32 } from "../helpers/prng.ts";

const sorted = <T>(it: Iterable<T>): T[] => [...it].sort();

describe("ChurnMap", () => {
  it("answers as a Map does through random sets and deletes", () => {
    for (const keys of [8, 300, 5000]) {
      const rnd = mulberry32(keys);
      const m = new Map<string, number>();
      const c = new ChurnMap<string, number>();
      for (let i = 0; i < 40_000; i++) {
        const k = `k${Math.floor(rnd() * keys)}`;
        const op = rnd();
        if (op < 0.45) {
          m.set(k, i);
          expect(c.set(k, i)).toBe(c);
        } else if (op < 0.9) expect(c.delete(k)).toBe(m.delete(k));
        else {
          expect(c.get(k)).toBe(m.get(k));
          expect(c.has(k)).toBe(m.has(k));
        }
        expect(c.size).toBe(m.size);
        if (i % 997 === 0) {
          expect(sorted(c.keys())).toEqual(sorted(m.keys()));
          expect(sorted(c.values())).toEqual(sorted(m.values()));
          expect(sorted([...c].map(([k, v]) => `${k}=${v}`))).toEqual(sorted([...m].map(([k, v]) => `${k}=${v}`)));
        }
      }
      // Never more dead entries than live ones past the sweep's minimum.
      expect(c.held - c.size).toBeLessThanOrEqual(Math.max(1024, c.size));
    }
  });

  it("sets a deleted key again in its own entry, keeping its place", () => {
    const c = new ChurnMap<string, number>();
    for (let i = 0; i < 100; i++) c.set(`k${i}`, i);
    for (let i = 0; i < 10_000; i++) {
      c.delete("k5");
      expect(c.get("k5")).toBeUndefined();
      expect(c.has("k5")).toBe(false);
      c.set("k5", i);
    }
    expect(c.held).toBe(100);
    expect(c.size).toBe(100);
    expect([...c.keys()].indexOf("k5")).toBe(5);
  });

  it("sweeps dead entries once they outnumber the live ones", () => {
    const c = new ChurnMap<number, number>();
    for (let i = 0; i < 3000; i++) c.set(i, i);
    for (let i = 0; i < 1500; i++) c.delete(i);
    expect(c.size).toBe(1500);
    expect(c.held).toBe(3000); // 1,500 dead, as many as the live ones: kept
    c.delete(1500);
    expect(c.held).toBe(1499); // the 1,501st outnumbers them: swept
    expect(c.size).toBe(1499);
    expect(c.get(2999)).toBe(2999);
    expect(c.get(0)).toBeUndefined();
    c.set(0, 7);
    expect(c.get(0)).toBe(7);
    expect(c.size).toBe(1500);
    c.clear();
    expect(c.size).toBe(0);
    expect(c.held).toBe(0);
    expect(c.delete(0)).toBe(false);
  });
});
