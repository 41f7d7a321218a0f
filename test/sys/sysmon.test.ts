// sysmon warnings on $SYS/brokers/<node>/sysmon/<name>: long_schedule when the test blocks the
// event loop (the node runs in this process), large_heap over a 1-byte threshold, busy_port for a
// subscriber that stops reading, long_gc for a pause reported by the GC observer, and at most one
// warning per subject within a window.

import { connect as netConnect, type Socket } from "node:net";
import mqttPacket, { type Packet } from "mqtt-packet";
import { describe, expect, it } from "vitest";
import { barrier, connect, uid, useNode } from "../conformance/helpers.ts";
import type { TestNode } from "../helpers/node.ts";

/** A subscriber on a plain socket that reads until its SUBACK, then stops reading. */
async function stalledSubscriber(n: TestNode, topic: string): Promise<Socket> {
  const socket = netConnect(n.port("tcp"), "127.0.0.1");
  await new Promise<void>((r) => socket.once("connect", () => r()));
  const parser = mqttPacket.parser({ protocolVersion: 4 });
  const suback = new Promise<void>((r) => parser.on("packet", (p: Packet) => p.cmd === "suback" && r()));
  socket.on("data", (b: Buffer) => parser.parse(b));
  const send = (p: Packet) => socket.write(mqttPacket.generate(p, { protocolVersion: 4 }));
  send({ cmd: "connect", protocolId: "MQTT", protocolVersion: 4, clean: true, keepalive: 0, clientId: uid("busy") });
  send({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos: 0 }] });
  await suback;
  socket.removeAllListeners("data");
  socket.pause();
  return socket;
}

describe("sysmon", () => {
  const node = useNode({
    "sysmon.long_schedule": "100ms",
    "sysmon.large_heap": "1",
    "sysmon.long_gc": "100ms",
    "sysmon.busy_port": "on",
    "sysmon.busy_port_bytes": "64KB",
    // Short, so a startup delay reported before the subscriber came does not hide the test's own.
    "sysmon.window": "100ms",
  });

  const watch = async (n: TestNode) => {
    const sub = await connect(n, 5);
    const marker = `marker/${uid()}`;
    await sub.c.subscribeAsync([`$SYS/brokers/${n.broker.nodeName}/sysmon/#`, marker], { qos: 1 });
    const next = (name: string, pred: (payload: string) => boolean = () => true) =>
      sub.inbox.waitFor((m) => m.topic.endsWith(`/sysmon/${name}`) && pred(m.payload), name);
    /** Payloads of `name` received so far, once everything the node sent before now has arrived. */
    const all = async (name: string) => {
      await barrier(sub, sub, marker);
      return sub.inbox.all.filter((m) => m.topic.endsWith(`/sysmon/${name}`)).map((m) => m.payload);
    };
    return Object.assign(next, { all });
  };

  it("reports long_schedule when the event loop is blocked", async () => {
    const n = node();
    const next = await watch(n);
    const end = Date.now() + 300;
    while (Date.now() < end) {
      // The node shares this thread: nothing runs until the loop is free again.
    }
    const delay = (p: string) => Number(/^long_schedule warning: delay = (\d+)ms$/.exec(p)?.[1] ?? 0);
    const m = await next("long_schedule", (p) => delay(p) >= 250);
    expect(m.payload).toMatch(/^long_schedule warning: delay = \d+ms$/);
  });

  it("reports large_heap above the threshold", async () => {
    const n = node();
    const next = await watch(n);
    const m = await next("large_heap");
    expect(m.payload).toMatch(/^large_heap warning: heap_used = \d+ bytes, threshold = 1 bytes$/);
  });

  it("reports long_gc for a pause above sysmon.long_gc, once per window", async () => {
    const n = node();
    const next = await watch(n);
    n.sys.sysmon.gcPause(40, "minor"); // below the threshold: nothing
    n.sys.sysmon.gcPause(150.4, "major");
    n.sys.sysmon.gcPause(170, "major"); // same window: suppressed
    expect(await next.all("long_gc")).toEqual(["long_gc warning: kind = major, duration = 150ms"]);
  });

  it("reports busy_port for a socket whose unsent bytes stay above the threshold", async () => {
    const n = node();
    const next = await watch(n);
    const topic = `busy/${uid()}`;
    const socket = await stalledSubscriber(n, topic);
    try {
      const payload = "x".repeat(64 * 1024);
      // Enough to fill both kernel buffers and leave megabytes queued in the server's socket.
      for (let i = 0; i < 200; i++) n.services.publish.publish({ topic, payload });
      const m = await next("busy_port");
      expect(m.payload).toMatch(
        /^busy_port warning: clientid = busy\S+, peer = 127\.0\.0\.1:\d+, buffered = \d+ bytes$/,
      );
      const buffered = Number(/buffered = (\d+)/.exec(m.payload)?.[1]);
      expect(buffered).toBeGreaterThan(64 * 1024);
    } finally {
      socket.destroy();
    }
  });
});
