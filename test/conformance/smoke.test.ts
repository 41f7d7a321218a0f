import mqtt from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";

let node: TestNode;
beforeAll(async () => {
  node = await startTestNode();
});
afterAll(async () => {
  await node.close();
});

describe.each([4, 5] as const)("smoke, protocol %i", (protocolVersion) => {
  it("delivers a QoS 1 message to a subscriber", async () => {
    const sub = await mqtt.connectAsync(node.url, { protocolVersion, clientId: `s${protocolVersion}` });
    const pub = await mqtt.connectAsync(node.url, { protocolVersion, clientId: `p${protocolVersion}` });
    await sub.subscribeAsync("t/+", { qos: 1 });
    const got = new Promise<[string, string]>((resolve) => sub.once("message", (t, p) => resolve([t, p.toString()])));
    await pub.publishAsync("t/1", "hi", { qos: 1 });
    expect(await got).toEqual(["t/1", "hi"]);
    await Promise.all([sub.endAsync(), pub.endAsync()]);
  });
});
