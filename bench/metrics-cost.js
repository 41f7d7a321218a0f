// Micro-benchmark: the cost of metrics counting on the publish path. Runs the in-process core
// (broker.publish -> router -> session.deliver -> channel -> PUBLISH bytes -> connection port,
// without a socket) with the real counters and again with counting switched off (Metrics.inc
// replaced by a no-op), alternating rounds, and prints the difference.
// Usage: npm run build && node bench/metrics-cost.js [--seconds 2]

import { Metrics } from "../dist/broker/metrics.js";
import { makeMessage } from "../dist/broker/types.js";
import { benchBroker, secondsArg } from "./in-process.js";

const seconds = secondsArg(2);
const { broker } = benchBroker();
const payload = Buffer.alloc(64, 120);

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

const realInc = Metrics.prototype.inc;
const noop = () => {};
run(500); // warm up
const rounds = [];
for (let r = 0; r < 4; r++) {
  Metrics.prototype.inc = realInc;
  const withMetrics = run((seconds * 1000) / 4);
  Metrics.prototype.inc = noop;
  const without = run((seconds * 1000) / 4);
  rounds.push({ withMetrics, without });
}
Metrics.prototype.inc = realInc;
const avg = (k) => rounds.reduce((a, r) => a + r[k], 0) / rounds.length;
const w = avg("withMetrics");
const wo = avg("without");
const cost = ((wo - w) / wo) * 100;
console.log(
  JSON.stringify({
    bench: "metrics-cost",
    publishes_per_s_with: Math.round(w),
    publishes_per_s_without: Math.round(wo),
    cost_percent: Number(cost.toFixed(2)),
  }),
);
console.log(
  `metrics cost on the publish path: ${cost.toFixed(2)}% (${Math.round(w)} vs ${Math.round(wo)} publishes/s, 10 deliveries each)`,
);
