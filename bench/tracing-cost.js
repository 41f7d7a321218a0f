// Micro-benchmark: the cost of tracing on the publish path. Runs the in-process core (as
// bench/metrics-cost.js: broker.publish -> router -> sessions -> channels -> PUBLISH bytes, no
// socket; ten MQTT 5.0 subscribers) with tracing off (no tracing port: what `telemetry.tracing =
// off` runs), sampling 1% and sampling 100% (publish + deliver spans, the span processor of the
// http/protobuf export with its default batch settings, encoding spans as they end, and an exporter
// that drops the encoded requests), in alternating rounds, and prints throughput and the median
// ratios to off (goals: 1% within 5%). Without sockets a publish costs a fraction of what it costs
// a broker serving clients, so this is tracing's cost at its largest; bench/overhead.js measures it
// end to end (svc against svc-trace1).
// With --rate N the publishes come at N/s (a few every millisecond, the process idle in between, as
// a broker's is between socket reads) instead of as fast as they can: the ratios are then of CPU
// per publish, the cost at that load, where sampled messages find the traced path colder than when
// publishes flood (rounds of a second or more: --seconds defaults to 48 then).
// --subscribers N: N subscribers to every publish instead of ten (1: the fan-in shape).
// Usage: npm run build && node bench/tracing-cost.js [--seconds 4] [--rate 20000] [--subscribers 10]

import { ParentBasedSampler, TraceIdRatioBasedSampler } from "@opentelemetry/sdk-trace-base";
import { makeMessage } from "../dist/broker/types.js";
import { EncodingSpanProcessor } from "../dist/telemetry/otlp-batch-processor.js";
import { BrokerTracing } from "../dist/tracing/broker-tracing.js";
import { startTracingSdk } from "../dist/tracing-sdk.js";
import { benchBroker, numberArg, secondsArg } from "./in-process.js";

/** Publishes per second offered (0: as fast as they go). */
const rate = numberArg("--rate", 0, (n) => n >= 0);
const seconds = secondsArg(rate > 0 ? 48 : 4);
const subscribers = numberArg("--subscribers", 10, (n) => Number.isInteger(n) && n >= 1);
const { broker } = benchBroker({ protoVer: 5, subscribers });
const payload = Buffer.alloc(64, 120);

/**
 * An exporter that drops the requests the processor encoded (the cost measured is the node's, not
 * the network's or the collector's).
 */
const dropping = {
  export: (_batch, done) => done({ code: 0 }),
  shutdown: async () => {},
};
const report = { warn: (m) => console.error(m), error: (e) => console.error(e) };
const sdk = async (ratio) =>
  startTracingSdk(
    "bench@127.0.0.1",
    { maxDeliverSpans: 10, samplingRun: 64 },
    {
      spanProcessors: [new EncodingSpanProcessor(dropping, {}, report)],
      sampler: new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) }),
      // What OTEL_TRACES_SAMPLER=parentbased_traceidratio gives the facade: root draws without spans.
      sampling: { root: ratio, parentBased: true },
    },
  );
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

const tick = () => new Promise((r) => setImmediate(r));
const sleep = () => new Promise((r) => setTimeout(r, 1));

/**
 * Publishes for `ms`, letting the event loop run after every 500 publishes as a broker's loop runs
 * between socket reads: the span processor's batches are then encoded inside the measured time.
 * With --rate, as many publishes as the rate owes every millisecond, the loop idle in between.
 * Answers publishes/s and CPU microseconds per publish.
 */
async function run(ms) {
  const start = performance.now();
  const until = start + ms;
  const cpu = process.cpuUsage();
  let n = 0;
  while (performance.now() < until) {
    const due = rate > 0 ? Math.round(((performance.now() - start) * rate) / 1000) - n : 500;
    for (let i = 0; i < due; i++) {
      broker.publish(makeMessage({ from: "p", topic: "bench/a/t", payload, qos: 0, retain: false }), true);
    }
    n += due;
    await (rate > 0 ? sleep() : tick());
  }
  const used = process.cpuUsage(cpu);
  return { perS: (n / (performance.now() - start)) * 1000, cpuUs: (used.user + used.system) / n };
}

for (const m of Object.keys(modes)) {
  use(m);
  await run(300); // warm up
}
// Many short rounds (off, 1%, 100% in turn): the machine's speed drifts, and each round's ratios
// to its own `off` cancel the drift; the figures are the medians over the rounds. A ratio is of
// publishes/s (flooding) or of CPU per publish (--rate), off over the mode: 1.000 = no cost.
const ROUNDS = 16;
const results = { off: [], sampled_1pct: [], sampled_100pct: [] };
const ratios = { sampled_1pct: [], sampled_100pct: [] };
for (let r = 0; r < ROUNDS; r++) {
  const round = {};
  for (const m of Object.keys(modes)) {
    use(m);
    round[m] = await run((seconds * 1000) / (ROUNDS * 3));
    results[m].push(round[m]);
  }
  for (const m of Object.keys(ratios)) {
    ratios[m].push(rate > 0 ? round.off.cpuUs / round[m].cpuUs : round[m].perS / round.off.perS);
  }
}
use("off");
await sdk1.shutdown();
await sdk100.shutdown();
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
const perS = (m) => Math.round(median(results[m].map((x) => x.perS)));
const cpuUs = (m) => Number(median(results[m].map((x) => x.cpuUs)).toFixed(2));
const ratio = (m) => Number(median(ratios[m]).toFixed(3));
console.log(
  JSON.stringify({
    bench: "tracing-cost",
    rate: rate > 0 ? rate : "flood",
    publishes_per_s_off: perS("off"),
    publishes_per_s_1pct: perS("sampled_1pct"),
    publishes_per_s_100pct: perS("sampled_100pct"),
    cpu_us_per_publish_off: cpuUs("off"),
    cpu_us_per_publish_1pct: cpuUs("sampled_1pct"),
    cpu_us_per_publish_100pct: cpuUs("sampled_100pct"),
    ratio_1pct: ratio("sampled_1pct"),
    ratio_100pct: ratio("sampled_100pct"),
    ratio_1pct_range: [Math.min(...ratios.sampled_1pct), Math.max(...ratios.sampled_1pct)].map((x) =>
      Number(x.toFixed(3)),
    ),
  }),
);
console.log(
  `tracing cost (${subscribers} deliveries per publish, 5.0 subscribers, ${rate > 0 ? `${rate} publishes/s: CPU per publish` : "flooding: publishes/s"}): 1% sampled ${((1 - ratio("sampled_1pct")) * 100).toFixed(1)}%, 100% sampled ${((1 - ratio("sampled_100pct")) * 100).toFixed(1)}%`,
);
