// The broker's timer wheel (broker/timer-wheel.ts): an entry is called on the first turn at or
// after its deadline, never before; rescheduling replaces, cancelling forgets; what a callback
// schedules lands on a later turn; a jump of the clock fires what waited, in deadline order.

import { describe, expect, it } from "vitest";
import { type Timed, TimerWheel } from "../../src/broker/timer-wheel.ts";

const RES = 1000;
const T0 = 1_700_000_000_000;

function entry(name: string, calls: string[], then?: (now: number) => void): Timed {
  return {
    wheelSlot: null,
    wheelAt: 0,
    due(now) {
      calls.push(name);
      then?.(now);
    },
  };
}

describe("TimerWheel", () => {
  it("calls an entry on the first turn at or after its deadline, once", () => {
    const w = new TimerWheel(RES, T0);
    const calls: string[] = [];
    const a = entry("a", calls);
    w.schedule(a, T0 + 2500);
    w.advance(T0 + 1000);
    w.advance(T0 + 2499);
    expect(calls).toEqual([]);
    w.advance(T0 + 3000);
    expect(calls).toEqual(["a"]);
    expect(a.wheelSlot).toBeNull();
    w.advance(T0 + 10_000);
    expect(calls).toEqual(["a"]);
    expect(w.size).toBe(0);
  });

  it("calls an entry whose deadline already passed on the next turn", () => {
    const w = new TimerWheel(RES, T0);
    const calls: string[] = [];
    w.advance(T0 + 5000);
    w.schedule(entry("late", calls), T0);
    w.advance(T0 + 5001);
    expect(calls).toEqual([]);
    w.advance(T0 + 6000);
    expect(calls).toEqual(["late"]);
  });

  it("replaces the deadline on schedule, keeps an earlier one on scheduleBy, forgets on cancel", () => {
    const w = new TimerWheel(RES, T0);
    const calls: string[] = [];
    const a = entry("a", calls);
    const b = entry("b", calls);
    const c = entry("c", calls);
    w.schedule(a, T0 + 2000);
    w.schedule(a, T0 + 5000);
    w.schedule(b, T0 + 2000);
    w.scheduleBy(b, T0 + 9000);
    w.schedule(c, T0 + 3000);
    w.scheduleBy(c, T0 + 1000);
    w.advance(T0 + 1000);
    expect(calls).toEqual(["c"]);
    w.advance(T0 + 2000);
    expect(calls).toEqual(["c", "b"]);
    w.cancel(a);
    w.advance(T0 + 60_000);
    expect(calls).toEqual(["c", "b"]);
    expect(w.size).toBe(0);
  });

  it("puts what a callback schedules on a later turn, and skips an entry cancelled by another", () => {
    const w = new TimerWheel(RES, T0);
    const calls: string[] = [];
    let again = 2;
    const victim = entry("victim", calls);
    const a: Timed = entry("a", calls, (now) => {
      w.cancel(victim);
      if (again-- > 0) w.schedule(a, now);
    });
    w.schedule(a, T0 + 1000);
    w.schedule(victim, T0 + 1000);
    w.advance(T0 + 1000);
    expect(calls).toEqual(["a"]);
    w.advance(T0 + 2000);
    w.advance(T0 + 3000);
    w.advance(T0 + 4000);
    expect(calls).toEqual(["a", "a", "a"]);
  });

  it("fires what waited, in deadline order, after the clock jumped far ahead", () => {
    const w = new TimerWheel(RES, T0);
    const calls: string[] = [];
    w.schedule(entry("year", calls), T0 + 365 * 86_400_000);
    w.schedule(entry("day", calls), T0 + 86_400_000);
    w.schedule(entry("hour", calls), T0 + 3_600_000);
    w.advance(T0 + 400 * 86_400_000);
    expect(calls).toEqual(["hour", "day", "year"]);
  });
});
