// Hook registry: priority order, folds that replace/stop, async folds, crash handling (logged and
// skipped; fail-closed folds stop with their fail value), removal by owner.
import { describe, expect, it } from "vitest";
import { Hooks, stop } from "../../src/hooks/hooks.ts";

interface Points {
  n: (x: number, acc: number) => number | undefined | ReturnType<typeof stop<number>> | Promise<number | undefined>;
  note: (s: string) => void;
}

function make() {
  const errors: string[] = [];
  const hooks = new Hooks<Points>({ error: (_o, msg) => errors.push(msg) });
  return { hooks, errors };
}

/** A registry whose `n` fold has a crashing callback (priority 2) and then `acc + 1`. */
function crashThenIncrement() {
  const made = make();
  made.hooks.add(
    "n",
    () => {
      throw new Error("boom");
    },
    2,
    "a",
  );
  made.hooks.add("n", (_x, acc) => acc + 1, 1, "b");
  return made;
}

describe("Hooks", () => {
  it("runs callbacks by priority, equal priorities in insertion order", () => {
    const { hooks } = make();
    const order: string[] = [];
    hooks.add("note", () => void order.push("low"), 1, "a");
    hooks.add("note", () => void order.push("high"), 10, "b");
    hooks.add("note", () => void order.push("low2"), 1, "c");
    hooks.run("note", "x");
    expect(order).toEqual(["high", "low", "low2"]);
  });

  it("folds: undefined keeps, a value replaces, stop ends", () => {
    const { hooks } = make();
    hooks.add("n", (_x, acc) => acc + 1, 3, "a");
    hooks.add("n", () => undefined, 2, "b");
    hooks.add("n", (_x, acc) => stop(acc * 10), 1, "c");
    hooks.add("n", () => 999, 0, "d");
    expect(hooks.fold("n", [0], 1)).toBe(20);
  });

  it("switches to a promise when a callback is async, keeping order", async () => {
    const { hooks } = make();
    hooks.add("n", async (_x, acc) => acc + 1, 2, "a");
    hooks.add("n", (_x, acc) => acc * 3, 1, "b");
    const r = hooks.fold("n", [0], 1);
    expect(r).toBeInstanceOf(Promise);
    expect(await r).toBe(6);
  });

  it("logs and skips a crashing callback; fail-closed folds stop with the fail value", async () => {
    const { hooks, errors } = crashThenIncrement();
    expect(hooks.fold("n", [0], 1)).toBe(2);
    expect(hooks.fold("n", [0], 1, -1)).toBe(-1);
    expect(errors).toHaveLength(2);
    const { hooks: h2 } = make();
    h2.add("n", async () => Promise.reject(new Error("x")), 1, "a");
    expect(await h2.fold("n", [0], 5, -1)).toBe(-1);
  });

  it("removes every callback of an owner", () => {
    const { hooks } = make();
    hooks.add("n", (_x, acc) => acc + 1, 1, "p");
    hooks.add("note", () => {}, 1, "p");
    expect(hooks.has("n")).toBe(true);
    hooks.removeOwner("p");
    expect(hooks.has("n")).toBe(false);
    expect(hooks.has("note")).toBe(false);
    expect(hooks.fold("n", [0], 7)).toBe(7);
  });
});

describe("Hooks.fold1 (one argument, no array) answers as fold does", () => {
  it("passes the argument; undefined keeps, a value replaces, stop ends", () => {
    const { hooks } = make();
    hooks.add("n", (x, acc) => acc + x, 3, "a");
    hooks.add("n", () => undefined, 2, "b");
    hooks.add("n", (_x, acc) => stop(acc * 10), 1, "c");
    hooks.add("n", () => 999, 0, "d");
    expect(hooks.fold1("n", 2, 1)).toBe(30);
    expect(hooks.fold("n", [2], 1)).toBe(30);
  });

  it("continues asynchronously from the first promise, keeping order and the argument", async () => {
    const { hooks } = make();
    hooks.add("n", (x, acc) => acc + x, 3, "a");
    hooks.add("n", async (_x, acc) => acc + 1, 2, "b");
    hooks.add("n", (x, acc) => acc * x, 1, "c");
    const r = hooks.fold1("n", 3, 1);
    expect(r).toBeInstanceOf(Promise);
    expect(await r).toBe(15);
    const { hooks: h2 } = make();
    h2.add("n", async () => Promise.reject(new Error("x")), 1, "a");
    expect(await h2.fold1("n", 0, 5, -1)).toBe(-1);
  });

  it("logs and skips a crashing callback; fail-closed stops with the fail value", () => {
    const { hooks, errors } = crashThenIncrement();
    expect(hooks.fold1("n", 0, 1)).toBe(2);
    expect(hooks.fold1("n", 0, 1, -1)).toBe(-1);
    expect(errors).toHaveLength(2);
    expect(hooks.fold1("other" as "n", 0, 7)).toBe(7);
  });
});

describe("Hooks.seesSystem", () => {
  it("is true while a callback of the hookpoint did not declare that it ignores system messages", () => {
    const { hooks } = make();
    expect(hooks.seesSystem("note")).toBe(false);
    hooks.add("note", () => {}, 1, "blind", { ignoresSystem: true });
    expect([hooks.has("note"), hooks.seesSystem("note")]).toEqual([true, false]);
    hooks.add("note", () => {}, 2, "sees");
    hooks.add("n", () => undefined, 1, "sees", { ignoresSystem: false });
    expect([hooks.seesSystem("note"), hooks.seesSystem("n")]).toEqual([true, true]);
    hooks.removeOwner("sees");
    expect([hooks.seesSystem("note"), hooks.seesSystem("n"), hooks.has("note")]).toEqual([false, false, true]);
    hooks.removeOwner("blind");
    expect([hooks.seesSystem("note"), hooks.has("note")]).toEqual([false, false]);
  });
});

describe("Hooks.fold3 (three arguments) answers as fold does", () => {
  interface P3 {
    t: (a: number, b: string, c: number, acc: string) => string | undefined | Promise<string>;
  }
  it("passes the arguments in order, synchronously and after a promise", async () => {
    const hooks = new Hooks<P3>({ error: () => {} });
    hooks.add("t", (a, b, c, acc) => `${acc}${a}${b}${c}`, 2, "x");
    hooks.add("t", async (a, _b, _c, acc) => `${acc}|${a}`, 1, "y");
    hooks.add("t", (_a, b, _c, acc) => `${acc}|${b}`, 0, "z");
    const r = hooks.fold3("t", 1, "b", 3, ">");
    expect(await r).toBe(">1b3|1|b");
    expect(await hooks.fold("t", [1, "b", 3], ">")).toBe(">1b3|1|b");
  });
});
