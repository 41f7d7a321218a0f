import { describe, expect, it } from "vitest";
import { InboundAliases, OutboundAliases } from "../../src/broker/session/topic-aliases.ts";

describe("InboundAliases", () => {
  it("rejects alias 0 and aliases above max [MQTT-3.3.2-8], [MQTT-3.3.2-12]", () => {
    const a = new InboundAliases(10);
    expect(a.resolve(0, "t")).toBe("invalid");
    expect(a.resolve(11, "t")).toBe("invalid");
    expect(a.resolve(-1, "t")).toBe("invalid");
    expect(a.resolve(1.5, "t")).toBe("invalid");
    expect(a.resolve(10, "t")).toBe("t");
    expect(a.resolve(1, "u")).toBe("u");
  });

  it("max 0 rejects every alias", () => {
    const a = new InboundAliases(0);
    expect(a.resolve(1, "t")).toBe("invalid");
    expect(a.resolve(1, "")).toBe("invalid");
    expect(a.isValidAlias(1)).toBe(false);
  });

  it("sets, uses and replaces mappings", () => {
    const a = new InboundAliases(3);
    expect(a.resolve(2, "")).toBe("invalid"); // unmapped, nothing allocated yet
    expect(a.resolve(2, "sensors/a")).toBe("sensors/a");
    expect(a.resolve(2, "")).toBe("sensors/a");
    expect(a.resolve(1, "")).toBe("invalid"); // unmapped alias in range
    expect(a.resolve(2, "sensors/b")).toBe("sensors/b"); // replace
    expect(a.resolve(2, "")).toBe("sensors/b");
    expect(a.resolve(3, "x")).toBe("x");
    expect(a.resolve(3, "")).toBe("x");
    expect(a.resolve(2, "")).toBe("sensors/b");
  });

  it("resolveOrNull disambiguates a topic named 'invalid'", () => {
    const a = new InboundAliases(2);
    expect(a.resolveOrNull(1, "invalid")).toBe("invalid");
    expect(a.resolveOrNull(1, "")).toBe("invalid");
    expect(a.resolveOrNull(2, "")).toBeNull();
    expect(a.resolveOrNull(3, "x")).toBeNull();
  });

  it("clear forgets mappings", () => {
    const a = new InboundAliases(2);
    a.resolve(1, "t");
    a.clear();
    expect(a.resolve(1, "")).toBe("invalid");
  });
});

describe("OutboundAliases", () => {
  it("returns null when max is 0", () => {
    const o = new OutboundAliases(0);
    expect(o.lookup("t")).toBeNull();
    expect(o.lookup("t")).toBeNull();
  });

  it("assigns 1..max first come first served, then known", () => {
    const o = new OutboundAliases(2);
    expect(o.lookup("a")).toEqual({ alias: 1, known: false });
    expect(o.lookup("a")).toEqual({ alias: 1, known: true });
    expect(o.lookup("b")).toEqual({ alias: 2, known: false });
    expect(o.lookup("c")).toBeNull(); // full, no eviction
    expect(o.lookup("a")).toEqual({ alias: 1, known: true });
    expect(o.lookup("b")).toEqual({ alias: 2, known: true });
    expect(o.lookup("c")).toBeNull();
    expect(o.size).toBe(2);
  });

  it("does not allocate for known lookups (same frozen object)", () => {
    const o = new OutboundAliases(5);
    o.lookup("a");
    const r1 = o.lookup("a");
    const r2 = o.lookup("a");
    expect(r1).toBe(r2);
    expect(Object.isFrozen(r1)).toBe(true);
  });

  it("clear releases all aliases", () => {
    const o = new OutboundAliases(1);
    o.lookup("a");
    o.clear();
    expect(o.lookup("b")).toEqual({ alias: 1, known: false });
  });
});
