// Micro-benchmark: the cost of tracing on the publish path. Runs the in-process core (as
// bench/metrics-cost.js: broker.publish -> router -> sessions -> channels -> PUBLISH bytes, no
// socket; ten MQTT 5.0 subscribers) with tracing off (no tracing port: what `telemetry.tracing =
// off` runs), sampling 1% and sampling 100% (publish + deliver spans, a batching span processor
// whose exporter drops the spans), alternating rounds, and prints throughput and ratios to off.
// Usage: npm run build && node bench/tracing-cost.js [--seconds 4]

import { BatchSpanProcessor, ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import { makeMessage } from "../dist/broker/types.js";
import { BrokerTracing } from "../dist/tracing/broker-tracing.js";
import { startTracingSdk } from "../dist/tracing-sdk.js";
import { benchBroker, secondsArg } from "./in-process.js";

const seconds = secondsArg(4);
const { broker } = benchBroker({ protoVer: 5 });
const payload = Buffer.alloc(64, 120);

/** A span exporter that drops everything (the cost measured is the node's, not the network's). */
const dropping = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {}, forceFlush: async () => {} };
const sdk = async (ratio) =>
  startTracingSdk("bench@127.0.0.1", 10, {
    spanProcessors: [new BatchSpanProcessor(dropping, { maxQueueSize: 65536, maxExportBatchSize: 4096 })],
    sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
    // What OTEL_TRACES_SAMPLER=parentbased_traceidratio gives the facade: root draws without spans.
    sampling: { root: ratio, parentBased: true },
  });
const sdk1 = await sdk(0.01);
const sdk100 = await sdk(1);
const modes = {
  off: null,
  sampled_1pct: new BrokerTracing(sdk1.tracing, "bench@127.0.0.1"),
  sampled_100pct: new BrokerTracing(sdk100.tracing, "bench@127.0.0.1"),
};

function use(mode) {
  for (const t of Object.values(modes)) t?.detach(broker);
  modes[mode]?.attach(broker);
}

function run(ms) {
  const until = performance.now() + ms;
  let n = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 1000; i++) {
      broker.publish(makeMessage({ from: "p", topic: "bench/a/t", payload, qos: 0, retain: false }));
    }
    n += 1000;
  }
  return (n / ms) * 1000;
}

for (const m of Object.keys(modes)) {
  use(m);
  run(300); // warm up
}
const sums = { off: 0, sampled_1pct: 0, sampled_100pct: 0 };
const rounds = 4;
for (let r = 0; r < rounds; r++) {
  for (const m of Object.keys(modes)) {
    use(m);
    sums[m] += run((seconds * 1000) / (rounds * 3));
    await new Promise((res) => setImmediate(res)); // let the batch processor export
  }
}
use("off");
await sdk1.shutdown();
await sdk100.shutdown();
const rate = (m) => sums[m] / rounds;
const ratio = (m) => Number((rate(m) / rate("off")).toFixed(3));
console.log(
  JSON.stringify({
    bench: "tracing-cost",
    publishes_per_s_off: Math.round(rate("off")),
    publishes_per_s_1pct: Math.round(rate("sampled_1pct")),
    publishes_per_s_100pct: Math.round(rate("sampled_100pct")),
    ratio_1pct: ratio("sampled_1pct"),
    ratio_100pct: ratio("sampled_100pct"),
  }),
);
console.log(
  `tracing cost (10 deliveries per publish, 5.0 subscribers): 1% sampled ${((1 - ratio("sampled_1pct")) * 100).toFixed(1)}%, 100% sampled ${((1 - ratio("sampled_100pct")) * 100).toFixed(1)}% below off`,
);
