// OTLP metrics export (`telemetry.metrics = on`): a node posts its metrics, statistics, listener
// figures and alarm count to an OTLP/HTTP receiver in the test, configured by the standard
// OTEL_EXPORTER_OTLP_* and OTEL_METRIC_EXPORT_INTERVAL variables: http/json (decoded and checked
// against the management API's own figures) and http/protobuf, the default.

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import mqtt from "mqtt";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

interface Post {
  path: string;
  contentType: string;
  body: Buffer;
}

const posts: Post[] = [];
let server: Server;
let base: string;
let node: TestNode | undefined;

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (d: Buffer) => chunks.push(d));
    req.on("end", () => {
      posts.push({ path: req.url ?? "", contentType: req.headers["content-type"] ?? "", body: Buffer.concat(chunks) });
      const json = req.headers["content-type"] === "application/json";
      res.writeHead(200, { "content-type": json ? "application/json" : "application/x-protobuf" });
      res.end(json ? "{}" : undefined);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(async () => {
  await node?.close();
  node = undefined;
  posts.length = 0;
  vi.unstubAllEnvs();
});

afterAll(async () => {
  await new Promise((r) => server.close(r));
});

type Attr = { key: string; value: { stringValue?: string } };
interface Point {
  attributes?: Attr[];
  asInt?: number | string;
}
interface JsonMetric {
  name: string;
  sum?: { dataPoints: Point[]; isMonotonic?: boolean };
  gauge?: { dataPoints: Point[] };
}
interface JsonExport {
  resourceMetrics: {
    resource: { attributes: Attr[] };
    scopeMetrics: { scope: { name: string }; metrics: JsonMetric[] }[];
  }[];
}

const attr = (attrs: Attr[] | undefined, key: string) => attrs?.find((a) => a.key === key)?.value.stringValue;
const metricsOf = (e: JsonExport) => e.resourceMetrics.flatMap((r) => r.scopeMetrics.flatMap((s) => s.metrics));

/** The value of one instrument's point (with `listener` when given) in the newest JSON export. */
function latest(
  name: string,
  listener?: string,
): { value: number; node?: string; monotonic?: boolean; kind: string } | undefined {
  for (let i = posts.length - 1; i >= 0; i--) {
    const m = metricsOf(JSON.parse(posts[i].body.toString()) as JsonExport).find((x) => x.name === name);
    if (m === undefined) continue;
    const points = m.sum?.dataPoints ?? m.gauge?.dataPoints ?? [];
    const p = points.find((x) => listener === undefined || attr(x.attributes, "listener") === listener);
    if (p === undefined) continue;
    return {
      value: Number(p.asInt),
      node: attr(p.attributes, "node"),
      monotonic: m.sum?.isMonotonic,
      kind: m.sum === undefined ? "gauge" : "sum",
    };
  }
  return undefined;
}

it("exports the node's metrics, statistics and listener figures over OTLP http/json, as the API reports them", async () => {
  vi.stubEnv("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL", "http/json");
  vi.stubEnv("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", `${base}/v1/metrics`);
  vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", "100");
  node = await startTestNode({ set: { "telemetry.metrics": "on" } });
  const c = await mqtt.connectAsync(node.url, { clientId: "otlp-metrics", protocolVersion: 5, reconnectPeriod: 0 });
  await c.subscribeAsync("m/t", { qos: 1 });
  for (let i = 0; i < 5; i++) await c.publishAsync("m/t", `n${i}`, { qos: 1 });

  await waitUntil(() => latest("svc.messages.qos1.received")?.value === 5, "an export after the publishes");
  const api = (await (
    await node.api.app.request(`/api/v4/nodes/${node.broker.nodeName}/metrics`, {
      headers: { authorization: `Basic ${Buffer.from("admin:public").toString("base64")}` },
    })
  ).json()) as { data: Record<string, number> };
  expect(api.data["messages.qos1.received"]).toBe(5);

  const received = latest("svc.messages.qos1.received");
  expect(received).toMatchObject({ node: node.broker.nodeName, monotonic: true, kind: "sum" });
  expect(latest("svc.connections.count")).toMatchObject({ value: 1, kind: "gauge", node: node.broker.nodeName });
  expect(latest("svc.subscriptions.count")?.value).toBe(1);
  expect(latest("svc.listener.current_conns", "mqtt:tcp")?.value).toBe(1);
  expect(latest("svc.listener.max_conns", "mqtt:tcp")?.value).toBe(1_024_000);
  expect(latest("svc.alarms.active")?.kind).toBe("gauge");

  const last = JSON.parse(posts.at(-1)?.body.toString() ?? "{}") as JsonExport;
  expect(posts.at(-1)?.path).toBe("/v1/metrics");
  const resource = last.resourceMetrics[0].resource.attributes;
  expect(attr(resource, "service.name")).toBe("svc");
  expect(attr(resource, "service.instance.id")).toBe(node.broker.nodeName);
  expect(last.resourceMetrics[0].scopeMetrics[0].scope.name).toBe("svc");
  await c.endAsync();
});

it("posts http/protobuf by default to OTEL_EXPORTER_OTLP_ENDPOINT, and a last export when the node stops", async () => {
  vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", base);
  // No periodic export within the test: what arrives is the one made at stop.
  vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", "600000");
  node = await startTestNode({ set: { "telemetry.metrics": "on" } });
  expect(posts).toHaveLength(0);
  await node.close();
  node = undefined;
  expect(posts).toHaveLength(1);
  const [p] = posts;
  expect(p.path).toBe("/v1/metrics");
  expect(p.contentType).toBe("application/x-protobuf");
  // Protobuf strings are their UTF-8 bytes: the instruments' names are in the request.
  for (const name of [
    "svc.messages.received",
    "svc.connections.count",
    "svc.listener.current_conns",
    "service.instance.id",
  ])
    expect(p.body.includes(Buffer.from(name))).toBe(true);
});
