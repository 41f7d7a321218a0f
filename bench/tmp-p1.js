import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import { makeMessage } from "../dist/broker/types.js";
import { encodeTraceExportRequest } from "../dist/telemetry/otlp-proto.js";
import { BrokerTracing } from "../dist/tracing/broker-tracing.js";
import { startTracingSdk } from "../dist/tracing-sdk.js";
import { benchBroker } from "./in-process.js";
const { broker } = benchBroker({ protoVer: 5 });
const payload = Buffer.alloc(64, 120);
const dropping = { export: (spans, done) => { encodeTraceExportRequest(spans); done({ code: 0 }); }, shutdown: async () => {}, forceFlush: async () => {} };
const ratio = +(process.argv[2] ?? 0.01);
const s = await startTracingSdk("bench@127.0.0.1", 10, {
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 65536, maxExportBatchSize: 4096 })],
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
    sampling: { root: ratio, parentBased: true },
  });
if (ratio > 0) new BrokerTracing(s.tracing, "bench@127.0.0.1").attach(broker);
const tick = () => new Promise((r) => setImmediate(r));
const start = performance.now(); let n = 0;
while (performance.now() < start + 5000) { for (let i = 0; i < 500; i++) broker.publish(makeMessage({ from: "p", topic: "bench/a/t", payload, qos: 0, retain: false })); n += 500; await tick(); }
console.log(ratio, Math.round(n / 5));
await s.shutdown();
process.exit(0);
