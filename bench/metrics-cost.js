// Micro-benchmark: the cost of metrics counting on the publish path. Runs the in-process core
// (broker.publish -> router -> session.deliver -> channel -> PUBLISH bytes -> connection port,
// without a socket) with the real counters and again with counting switched off (Metrics.inc
// replaced by a no-op), alternating rounds, and prints the difference.
// Usage: npm run build && node bench/metrics-cost.js [--seconds 2]

import { Broker } from "../dist/broker/broker.js";
import { Channel } from "../dist/broker/channel/channel.js";
import { Metrics } from "../dist/broker/metrics.js";
import { Session } from "../dist/broker/session/session.js";
import { DEFAULT_ZONE } from "../dist/broker/settings.js";
import { makeMessage } from "../dist/broker/types.js";
import { silentLogger } from "../dist/telemetry/logger.js";

const at = process.argv.indexOf("--seconds");
const seconds = at >= 0 ? Number(process.argv[at + 1]) : 2;
const zone = { ...DEFAULT_ZONE };
const broker = new Broker(
  { nodeName: "bench@127.0.0.1", sharedStrategy: "random", zones: new Map([["external", zone]]), tickInterval: 1000 },
  silentLogger(),
);

// Ten connected subscribers: real channels over a connection port that drops the bytes.
const port = {
  protoVer: 4,
  tracer: null,
  setMaxInbound() {},
  send: () => 0,
  sendBytes() {},
  writable: () => true,
  bufferedBytes: () => 0,
  close() {},
};
const info = {
  listener: "mqtt:tcp:bench",
  protocol: "mqtt:tcp",
  zone: "external",
  peerHost: "127.0.0.1",
  peerPort: 1,
  sockHost: "127.0.0.1",
  sockPort: 1883,
};
for (let i = 0; i < 10; i++) {
  const ch = new Channel(port, info, broker, zone);
  ch.client.clientId = `s${i}`;
  ch.state = "connected";
  const s = new Session({ ...ch.client }, zone, broker);
  ch.session = s;
  s.attach(ch, 65535);
  broker.subscribe(s, i % 2 === 0 ? "bench/+/t" : "bench/a/t", {
    qos: 1,
    nl: false,
    rap: false,
    rh: 0,
    subId: 0,
    share: undefined,
  });
}
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
