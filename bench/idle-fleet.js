// Micro-benchmark: what a node holding many idle connections spends every second on them, i.e.
// how long its event loop is blocked once a second whatever the traffic. Runs the in-process core
// with N connected channels (keepalive 60 s, sessions, no socket) and, on a simulated clock, lets
// each client send PINGREQ once a minute while the broker's sweep turns every second (timer wheel:
// idle timeouts, keepalive deadlines, session deadlines) and the node's statistics refresh (the
// counts and maxima of `stats`). Prints the time per second of each, median and worst, and the
// JavaScript heap the fleet holds per connection (channel, session, registry and wheel entries;
// the socket's own objects, which the RSS scenario of run.js measures, are not in it).
// Usage: npm run build && node bench/idle-fleet.js [--connections 100000] [--seconds 180]

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { Channel } from "../dist/broker/channel/channel.js";
import { addCoreSources, Stats } from "../dist/sys/stats.js";
import { BENCH_INFO, benchBroker, benchPort, numberArg } from "./in-process.js";

const N = numberArg("--connections", 100_000, (n) => Number.isInteger(n) && n > 0);
const SECONDS = numberArg("--seconds", 180, (n) => Number.isInteger(n) && n >= 10);
const KEEPALIVE = 60;

const { broker, zone } = benchBroker({ subscribers: 0 });
const port = benchPort(4, () => {
  throw new Error("an idle client within its keepalive was closed");
});

// A full collection before each heap reading (exposed here, so that no flag is needed).
setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc");
const heapUsed = () => {
  gc();
  return process.memoryUsage().heapUsed;
};
const heapBefore = heapUsed();

// A fleet that has been up for a while: client i pings in second i * 60 / N of every minute.
const group = (i) => Math.floor((i * KEEPALIVE) / N);
let clock = Date.now();
const channels = [];
for (let i = 0; i < N; i++) {
  const ch = new Channel(port, BENCH_INFO, broker, zone);
  ch.client.clientId = `idle${i}`;
  ch.lastRecv = clock + (group(i) + 1) * 1000 - 500 - KEEPALIVE * 1000;
  ch.keepalive = KEEPALIVE;
  const { session } = broker.sessions.open(ch, true, 0, null);
  ch.session = session;
  session.attach(ch, 65535);
  ch.state = "connected";
  ch.watchKeepalive();
  channels.push(ch);
}

const heapPerConnection = (heapUsed() - heapBefore) / N;

const stats = new Stats();
addCoreSources(stats, broker, undefined);

const sweep = [];
const refresh = [];
for (let s = 0; s < SECONDS; s++) {
  // Each client's PINGREQ, once per keepalive, spread over the minute.
  const from = Math.ceil(((s % KEEPALIVE) * N) / KEEPALIVE);
  const to = Math.ceil((((s % KEEPALIVE) + 1) * N) / KEEPALIVE);
  clock += 1000;
  for (let i = from; i < to; i++) channels[i].lastRecv = clock - 500;
  let t = performance.now();
  broker.tick(clock);
  sweep.push(performance.now() - t);
  t = performance.now();
  stats.refresh();
  refresh.push(performance.now() - t);
}
if (broker.channels.size !== N) throw new Error(`${N - broker.channels.size} channels closed`);

const skip = 10; // the first turns run unoptimized code
const fmt = (a) => {
  const v = a.slice(skip).sort((x, y) => x - y);
  return `median ${v[Math.floor(v.length / 2)].toFixed(3)} ms, worst ${v[v.length - 1].toFixed(3)} ms`;
};
console.log(
  `${N.toLocaleString("en")} idle connections (keepalive ${KEEPALIVE} s), ${SECONDS - skip} simulated seconds:`,
);
console.log(`  sweep (timer wheel) per second: ${fmt(sweep)}`);
console.log(`  stats refresh per second:       ${fmt(refresh)}`);
console.log(`  JavaScript heap per connection: ${Math.round(heapPerConnection)} bytes`);
