// 06-timeouts: connections that go quiet are closed by the server, and only they are.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 3.1.4 (a server SHOULD close a connection that sends no CONNECT within a
//     reasonable time), 3.1.2.10 Keep Alive (no packet for 1.5 x Keep Alive -> the server MUST
//     disconnect, MQTT-3.1.2-24).
//   MQTT 5.0 (OASIS) 3.1.2.10 (MQTT-3.1.2-22), 3.14.2.1 (DISCONNECT 0x8D Keep Alive timeout).
//
// Times are measured between socket events; nothing sleeps. The node uses idle_timeout 500ms and
// the harness's 100ms sweep.

import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { expectClosedSilently, expectDisconnect } from "./expect-close.ts";
import { connectBytes, destroyAll, RawClient } from "./raw-client.ts";

let node: TestNode;
let port: number;
let by: Bystander;

beforeAll(async () => {
  node = await startTestNode({ set: { "zone.external.idle_timeout": "500ms" } });
  port = node.port("tcp");
  // keepalive 0: the bystander never times out.
  by = await bystander(node.url);
});
afterAll(async () => {
  await by?.end();
  await node?.close();
});
afterEach(() => destroyAll());

describe("06-timeouts: no CONNECT", () => {
  it("a connection that sends nothing is closed after idle_timeout, nothing sent", async () => {
    const t0 = Date.now();
    const c = await RawClient.open(port, 4);
    await c.closed(5000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(450);
    expect(c.bytes().length).toBe(0);
    await by.check();
  });

  it("half a CONNECT is closed after idle_timeout too", async () => {
    const c = await RawClient.open(port, 4);
    const bytes = connectBytes(4, "half-a-connect");
    await c.send(bytes.subarray(0, 8));
    await c.closed(5000);
    expect(c.bytes().length).toBe(0);
    await by.check();
  });
});

describe.each([4, 5] as const)("06-timeouts: Keep Alive 1s, then silence (protocol %i)", (ver) => {
  it("closed no sooner than 1.5 x Keep Alive and not much later [MQTT-3.1.2-24]", async () => {
    const c = await RawClient.open(port, ver);
    await c.send(connectBytes(ver, `ka-${ver}`, { keepalive: 1 }));
    await c.expect("connack");
    const t0 = Date.now();
    if (ver === 5) await expectDisconnect(c, 0x8d);
    else await expectClosedSilently(c);
    const elapsed = Date.now() - t0;
    expect(elapsed).toBeGreaterThanOrEqual(1450);
    expect(elapsed).toBeLessThan(3000);
    await by.check();
  });
});
