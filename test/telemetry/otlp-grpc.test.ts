// OTLP over gRPC (OTEL_EXPORTER_OTLP_PROTOCOL=grpc): a node's spans and metrics reach a gRPC
// collector in the test (a grpc-js server answering the OTLP TraceService and MetricsService Export
// calls, requests kept as bytes). Protobuf strings are their UTF-8 bytes, so the requests are
// checked for the span and instrument names they must carry.

import * as grpc from "@grpc/grpc-js";
import mqtt from "mqtt";
import { afterAll, afterEach, beforeAll, expect, it, vi } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

const bytes = (b: Buffer): Buffer => b;
/** One unary Export method whose request and response stay bytes (an empty response is valid). */
const exportMethod = (service: string) => ({
  path: `/opentelemetry.proto.collector.${service}/Export`,
  requestStream: false,
  responseStream: false,
  requestSerialize: bytes,
  requestDeserialize: bytes,
  responseSerialize: bytes,
  responseDeserialize: bytes,
});

const received: { service: string; body: Buffer }[] = [];
let server: grpc.Server;
let endpoint: string;
let node: TestNode | undefined;

beforeAll(async () => {
  server = new grpc.Server();
  for (const service of ["trace.v1.TraceService", "metrics.v1.MetricsService"]) {
    server.addService(
      { Export: exportMethod(service) },
      {
        Export: (call: grpc.ServerUnaryCall<Buffer, Buffer>, done: grpc.sendUnaryData<Buffer>) => {
          received.push({ service, body: call.request });
          done(null, Buffer.alloc(0));
        },
      },
    );
  }
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", grpc.ServerCredentials.createInsecure(), (err, p) =>
      err === null ? resolve(p) : reject(err),
    ),
  );
  endpoint = `http://127.0.0.1:${port}`;
});

afterEach(async () => {
  await node?.close();
  node = undefined;
  received.length = 0;
  vi.unstubAllEnvs();
});

afterAll(async () => {
  await new Promise<void>((resolve) => server.tryShutdown(() => resolve()));
});

const carries = (service: string, name: string): boolean =>
  received.some((r) => r.service === service && r.body.includes(Buffer.from(name)));

it("exports a traced publish's spans and the node's metrics to a gRPC collector", async () => {
  vi.stubEnv("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc");
  vi.stubEnv("OTEL_EXPORTER_OTLP_ENDPOINT", endpoint);
  vi.stubEnv("OTEL_TRACES_SAMPLER", "always_on");
  vi.stubEnv("OTEL_BSP_SCHEDULE_DELAY", "50");
  vi.stubEnv("OTEL_METRIC_EXPORT_INTERVAL", "100");
  node = await startTestNode({ set: { "telemetry.tracing": "on", "telemetry.metrics": "on" } });
  const c = await mqtt.connectAsync(node.url, { clientId: "grpc-otlp", protocolVersion: 5, reconnectPeriod: 0 });
  await c.subscribeAsync("g/t", { qos: 1 });
  await c.publishAsync("g/t", "hello", { qos: 1 });
  await waitUntil(() => carries("trace.v1.TraceService", "publish g/t"), "the publish span over gRPC");
  expect(carries("trace.v1.TraceService", "deliver g/t")).toBe(true);
  await waitUntil(() => carries("metrics.v1.MetricsService", "svc.messages.received"), "metrics over gRPC");
  expect(carries("metrics.v1.MetricsService", "svc.connections.count")).toBe(true);
  expect(carries("metrics.v1.MetricsService", node.broker.nodeName)).toBe(true);
  await c.endAsync();
});
