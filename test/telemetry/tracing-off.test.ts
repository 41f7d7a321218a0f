// With `telemetry.tracing = off` (the default): no OpenTelemetry module is loaded (a resolve hook
// records every module this process resolves from here on), the broker has no tracing port and
// no tracing hook, no span is made, and a publisher's traceparent reaches subscribers unchanged.

import { registerHooks } from "node:module";
import mqtt from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";

const resolved: string[] = [];
registerHooks({
  resolve(spec, ctx, next) {
    const r = next(spec, ctx);
    resolved.push(r.url);
    return r;
  },
});

const { startTestNode } = await import("../helpers/node.ts");
const { tracingLoaded } = await import("../../src/telemetry/tracing.ts");
let node: Awaited<ReturnType<typeof startTestNode>>;

beforeAll(async () => {
  node = await startTestNode();
});
afterAll(async () => {
  await node?.close();
});

it("loads no OpenTelemetry module and registers nothing", async () => {
  const sub = await mqtt.connectAsync(node.url, { clientId: "off-sub", protocolVersion: 5, reconnectPeriod: 0 });
  await sub.subscribeAsync("off/t");
  const got = new Promise<Record<string, unknown>>((resolve) =>
    sub.on("message", (_t, _p, packet) =>
      resolve((packet.properties?.userProperties ?? {}) as Record<string, unknown>),
    ),
  );
  const pub = await mqtt.connectAsync(node.url, { clientId: "off-pub", protocolVersion: 5, reconnectPeriod: 0 });
  const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
  await pub.publishAsync("off/t", "x", { properties: { userProperties: { traceparent: tp } } });
  expect((await got).traceparent).toBe(tp);
  await Promise.all([sub.endAsync(), pub.endAsync()]);

  expect(node.broker.tracing).toBeNull();
  expect(node.broker.hooks.has("client.connect")).toBe(false);
  expect(tracingLoaded()).toBe(false);
  expect(resolved.length).toBeGreaterThan(0);
  expect(resolved.filter((u) => u.includes("@opentelemetry"))).toEqual([]);
  // The hook does see such a load (control).
  await import("@opentelemetry/api");
  expect(resolved.some((u) => u.includes("@opentelemetry/api"))).toBe(true);
});
