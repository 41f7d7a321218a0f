// Micro-benchmark: the CPU cost per span of encoding an OTLP http/protobuf export request (the
// ExportTraceServiceRequest body), the SDK's ProtobufTraceSerializer against our encoder
// (src/telemetry/otlp-proto.ts). A batch of 512 finished SDK spans like a broker's deliver spans
// (a remote parent, ten messaging attributes each), encoded over and over in alternating rounds;
// prints microseconds per span for each and the ratio, after checking both give the same bytes.
// Usage: npm run build && node bench/otlp-encode.js [--seconds 4]

import * as api from "@opentelemetry/api";
import { ProtobufTraceSerializer } from "@opentelemetry/otlp-transformer";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOnSampler,
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
} from "@opentelemetry/sdk-trace-base";
import { encodeTraceExportRequest } from "../dist/telemetry/otlp-proto.js";

const at = process.argv.indexOf("--seconds");
const seconds = at < 0 ? 4 : Number(process.argv[at + 1]) || 4;
const BATCH = 512;

function batch() {
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    sampler: new AlwaysOnSampler(),
    resource: resourceFromAttributes({
      "service.name": "svc",
      "service.version": "0.1.0",
      "service.instance.id": "svc-0@10.0.0.1",
      "k8s.pod.name": "svc-0",
      "k8s.namespace.name": "mqtt",
    }),
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const tracer = provider.getTracer("svc", "0.1.0");
  const hex = (n) => Array.from({ length: n }, () => "0123456789abcdef"[Math.floor(Math.random() * 16)]).join("");
  for (let i = 0; i < BATCH; i++) {
    const parent = { traceId: hex(32), spanId: hex(16), traceFlags: 1, isRemote: i % 2 === 0 };
    const ctx = api.trace.setSpanContext(api.ROOT_CONTEXT, parent);
    const topic = `sensors/building-${i % 7}/room-${i % 31}/temperature`;
    tracer
      .startSpan(
        `deliver ${topic}`,
        {
          kind: api.SpanKind.PRODUCER,
          attributes: {
            "messaging.system": "mqtt",
            "messaging.operation.type": "send",
            "messaging.operation.name": "deliver",
            "messaging.destination.name": topic,
            "messaging.client.id": `device-${String(i).padStart(6, "0")}`,
            "messaging.message.body.size": 64 + (i % 200),
            "messaging.mqtt.qos": i % 3,
            "messaging.mqtt.retain": i % 10 === 0,
            "network.peer.address": `10.0.${i % 256}.${(i * 7) % 256}`,
            "network.peer.port": 40000 + i,
          },
        },
        ctx,
      )
      .end();
  }
  return exporter.getFinishedSpans();
}

const spans = batch();
const sdkOut = ProtobufTraceSerializer.serializeRequest(spans);
const ourOut = encodeTraceExportRequest(spans);
if (!Buffer.from(sdkOut).equals(Buffer.from(ourOut))) throw new Error("the encodings differ");

const candidates = [
  ["sdk ProtobufTraceSerializer", () => ProtobufTraceSerializer.serializeRequest(spans)],
  ["ours encodeTraceExportRequest", () => encodeTraceExportRequest(spans)],
];
const totals = candidates.map(() => ({ ns: 0, spans: 0 }));
let sink = 0;
const round = (fn, ms) => {
  const end = performance.now() + ms;
  let n = 0;
  const t0 = process.hrtime.bigint();
  while (performance.now() < end) {
    sink += fn().length;
    n++;
  }
  return { ns: Number(process.hrtime.bigint() - t0), n };
};
for (const [, fn] of candidates) round(fn, 300); // warm up
const rounds = 8;
for (let r = 0; r < rounds; r++) {
  candidates.forEach(([, fn], i) => {
    const { ns, n } = round(fn, (seconds * 1000) / rounds / candidates.length);
    totals[i].ns += ns;
    totals[i].spans += n * BATCH;
  });
}
console.log(`batch: ${BATCH} spans, ${ourOut.length} bytes (${(ourOut.length / BATCH).toFixed(0)} per span)`);
const per = totals.map((t) => t.ns / t.spans / 1000);
for (const [i, [name]] of candidates.entries()) console.log(`${name.padEnd(32)} ${per[i].toFixed(3)} µs/span`);
console.log(`speedup: ${(per[0] / per[1]).toFixed(1)}x`);
if (sink === 0) process.exitCode = 1; // (keeps the results alive)
