import { describe, expect, it } from "vitest";
import { SendWindow } from "../../src/bridges/send-window.ts";

describe("SendWindow", () => {
  it("keeps at most `size` QoS 1/2 publishes unacknowledged, the rest in order, QoS 0 behind them too", () => {
    const w = new SendWindow(2);
    const sent: string[] = [];
    const submit = (name: string, qos: number) => w.submit(qos, () => sent.push(name));
    submit("a", 1);
    submit("b0", 0); // nothing waits: goes at once
    submit("c", 2);
    submit("d", 1); // window full
    submit("e0", 0); // behind d
    submit("f", 1);
    expect(sent).toEqual(["a", "b0", "c"]);
    expect([w.inflight, w.waiting]).toEqual([2, 3]);
    w.release(); // a acknowledged
    expect(sent).toEqual(["a", "b0", "c", "d", "e0"]);
    expect([w.inflight, w.waiting]).toEqual([2, 1]);
    w.release();
    w.release();
    expect(sent).toEqual(["a", "b0", "c", "d", "e0", "f"]);
    expect([w.inflight, w.waiting]).toEqual([1, 0]);
    submit("g0", 0);
    expect(sent.at(-1)).toBe("g0");
  });

  it("a completion inside a send does not reorder what waits", () => {
    const w = new SendWindow(1);
    const sent: string[] = [];
    w.submit(1, () => sent.push("a"));
    // b fails at once (as a client that is closing would): it releases inside its own send.
    w.submit(1, () => {
      sent.push("b");
      w.release();
    });
    w.submit(1, () => sent.push("c"));
    w.release(); // a acknowledged: b goes, fails, and c goes after it
    expect(sent).toEqual(["a", "b", "c"]);
    expect([w.inflight, w.waiting]).toEqual([1, 0]);
  });
});
