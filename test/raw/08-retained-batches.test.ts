// 08-retained-batches: a subscription that matches more retained messages than one batch
// (RETAINED_BATCH) gets them over several turns of the event loop, every one exactly once with
// RETAIN set (MQTT 3.1.1 section 3.3.1.3, 5.0 section 3.3.1.3, [MQTT-3.3.1-6]); the batches after
// the first stop once the subscription is gone, so an UNSUBSCRIBE sent with the SUBSCRIBE leaves
// exactly one batch delivered.

import type { IPublishPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { RETAINED_BATCH } from "../../src/retainer/retainer.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { type Bystander, bystander } from "./bystander.ts";
import { destroyAll, frame, RawClient, str } from "./raw-client.ts";

let node: TestNode;
let port: number;
let by: Bystander;

beforeAll(async () => {
  node = await startTestNode();
  port = node.port("tcp");
  by = await bystander(node.url);
});
afterAll(async () => {
  await by?.end();
  await node?.close();
});
afterEach(() => destroyAll());

const COUNT = Math.floor(RETAINED_BATCH * 2.5);
const props = (ver: number): number[] => (ver === 5 ? [0] : []);

/** Stores COUNT retained messages under `prefix/` (QoS 0, one write), answered once all are in. */
async function storeRetained(ver: 4 | 5, prefix: string): Promise<void> {
  const p = await RawClient.connected(port, ver, `${prefix}-pub`);
  const frames: Buffer[] = [];
  for (let i = 0; i < COUNT; i++) frames.push(frame(0x31, [...str(`${prefix}/${i}`), ...props(ver), 0x76, i & 0xff]));
  await p.send(Buffer.concat(frames));
  await p.send([0xc0, 0x00]);
  await p.expect("pingresp");
  expect(node.retainer.count).toBeGreaterThanOrEqual(COUNT);
}

describe.each([4, 5] as const)("08-retained-batches (protocol %i)", (ver) => {
  it(`delivers ${COUNT} retained messages to one subscription, each once, RETAIN set`, async () => {
    const prefix = `bulk${ver}`;
    await storeRetained(ver, prefix);
    const c = await RawClient.connected(port, ver, `${prefix}-sub`);
    await c.send(frame(0x82, [0x00, 0x01, ...props(ver), ...str(`${prefix}/#`), 0x00]));
    const seen = new Set<string>();
    let subacks = 0;
    while (seen.size < COUNT) {
      const p = await c.next();
      if (p.cmd === "suback") {
        subacks++;
        continue;
      }
      expect(p.cmd).toBe("publish");
      const pub = p as IPublishPacket;
      expect(pub.retain).toBe(true);
      expect(seen.has(pub.topic), pub.topic).toBe(false);
      seen.add(pub.topic);
    }
    expect(subacks).toBe(1);
    // Nothing more: the next packet is the answer to a PINGREQ.
    await c.send([0xc0, 0x00]);
    expect((await c.next()).cmd).toBe("pingresp");
    await by.check();
  });

  it("stops after the first batch when the subscription is gone before the next turn", async () => {
    const prefix = `gone${ver}`;
    await storeRetained(ver, prefix);
    const c = await RawClient.connected(port, ver, `${prefix}-sub`);
    // SUBSCRIBE and UNSUBSCRIBE in one write: read in the same turn, before the second batch.
    await c.send(
      Buffer.concat([
        frame(0x82, [0x00, 0x01, ...props(ver), ...str(`${prefix}/#`), 0x00]),
        frame(0xa2, [0x00, 0x02, ...props(ver), ...str(`${prefix}/#`)]),
      ]),
    );
    expect((await c.next()).cmd).toBe("suback");
    let publishes = 0;
    for (let p = await c.next(); p.cmd !== "unsuback"; p = await c.next()) {
      expect(p.cmd).toBe("publish");
      publishes++;
    }
    expect(publishes).toBe(RETAINED_BATCH);
    await c.send([0xc0, 0x00]);
    expect((await c.next()).cmd).toBe("pingresp");
  });
});
