import { afterEach, describe, expect, it, vi } from "vitest";
import { now, readBegins, readDone } from "../../src/broker/clock.ts";
import { makeMessage } from "../../src/broker/types.ts";

describe("the broker's clock", () => {
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("answers the read's time during a read (one clock read), the clock's outside", () => {
    let t = 1_000;
    const clock = vi.spyOn(Date, "now").mockImplementation(() => t);
    expect(now()).toBe(1_000);
    const outer = readBegins();
    t = 2_000;
    expect(now()).toBe(1_000);
    // A message made during the read is stamped with the read's time; its expiry counts from it.
    const msg = makeMessage({
      topic: "t",
      payload: Buffer.alloc(0),
      qos: 0,
      retain: false,
      properties: { messageExpiryInterval: 5 },
    });
    expect(msg.timestamp).toBe(1_000);
    expect(msg.expiresAt).toBe(6_000);
    const calls = clock.mock.calls.length;
    for (let i = 0; i < 10; i++) now();
    expect(clock.mock.calls.length).toBe(calls);
    readDone(outer);
    expect(now()).toBe(2_000);
    expect(makeMessage({ topic: "t", payload: Buffer.alloc(0), qos: 0, retain: false }).timestamp).toBe(2_000);
  });

  it("restores an outer read's time when a nested one ends", () => {
    let t = 10;
    vi.spyOn(Date, "now").mockImplementation(() => t);
    const a = readBegins();
    t = 20;
    const b = readBegins();
    expect(now()).toBe(20);
    readDone(b);
    t = 30;
    expect(now()).toBe(10);
    readDone(a);
    expect(now()).toBe(30);
  });
});
