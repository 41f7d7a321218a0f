import { describe, expect, it } from "vitest";
import { MAX_PACKET_ID, PacketIdAllocator } from "../../src/broker/session/packet-ids.ts";

describe("PacketIdAllocator", () => {
  const none = () => false;

  it("starts at 1 and counts up", () => {
    const a = new PacketIdAllocator();
    expect(a.next(none)).toBe(1);
    expect(a.next(none)).toBe(2);
    expect(a.next(none)).toBe(3);
  });

  it("wraps from 65535 to 1, never returning 0", () => {
    const a = new PacketIdAllocator();
    let id = 0;
    for (let i = 0; i < MAX_PACKET_ID; i++) id = a.next(none);
    expect(id).toBe(65535);
    expect(a.next(none)).toBe(1);
  });

  it("skips ids in use", () => {
    const a = new PacketIdAllocator();
    const used = new Set([1, 2, 4]);
    const inUse = (id: number) => used.has(id);
    expect(a.next(inUse)).toBe(3);
    expect(a.next(inUse)).toBe(5);
  });

  it("skips in-use ids across the wrap", () => {
    const a = new PacketIdAllocator();
    for (let i = 0; i < 65534; i++) a.next(none); // last = 65534
    const used = new Set([65535, 1, 2]);
    expect(a.next((id) => used.has(id))).toBe(3);
  });

  it("returns 0 when all 65535 ids are in use, and recovers", () => {
    const a = new PacketIdAllocator();
    let calls = 0;
    expect(
      a.next(() => {
        calls++;
        return true;
      }),
    ).toBe(0);
    expect(calls).toBe(65535);
    const used = new Set<number>();
    for (let i = 1; i <= 65535; i++) if (i !== 40000) used.add(i);
    expect(a.next((id) => used.has(id))).toBe(40000);
    used.add(40000);
    expect(a.next((id) => used.has(id))).toBe(0);
    used.delete(7);
    expect(a.next((id) => used.has(id))).toBe(7);
  });

  it("reset restarts at 1", () => {
    const a = new PacketIdAllocator();
    a.next(none);
    a.next(none);
    a.reset();
    expect(a.next(none)).toBe(1);
  });
});
