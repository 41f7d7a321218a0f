// Young collections paced by socket reads (broker/connection/read-pacing.ts): what an MQTT
// connection reads is counted, and the installed collection runs once per step of bytes; with none
// installed, nothing runs. The collection here is a counter (the process entry installs V8's).

import { afterEach, describe, expect, it } from "vitest";
import { bytesRead, collectEvery } from "../../src/broker/connection/read-pacing.ts";
import { connect, uid, useNode, waitUntil } from "../conformance/helpers.ts";

const node = useNode();

afterEach(() => collectEvery(0, null));

describe("young collections paced by socket reads", () => {
  it("run once per step of bytes counted", () => {
    let runs = 0;
    collectEvery(1000, () => runs++);
    for (let i = 0; i < 25; i++) bytesRead(100);
    expect(runs).toBe(2);
    bytesRead(500);
    expect(runs).toBe(3);
    collectEvery(0, null);
    bytesRead(10_000);
    expect(runs).toBe(3);
  });

  it("count what MQTT connections read", async () => {
    let runs = 0;
    collectEvery(256 * 1024, () => runs++);
    const topic = `pacing/${uid()}`;
    const sub = await connect(node(), 4);
    await sub.c.subscribeAsync(topic, { qos: 1 });
    let got = 0;
    sub.c.on("message", () => got++);
    const pub = await connect(node(), 4);
    // 1 MB published: the node reads it from the publisher's connection.
    for (let i = 0; i < 16; i++) await pub.c.publishAsync(topic, Buffer.alloc(65_536, i), { qos: 1 });
    await waitUntil(() => got === 16, "16 messages delivered");
    expect(runs).toBeGreaterThanOrEqual(4);
  });
});
