// Micro-benchmark: the cost of the rule engine on the publish path. Runs the in-process core
// (broker.publish -> router -> session.deliver -> channel -> PUBLISH bytes -> connection port,
// without a socket) with a rule engine holding 10 enabled rules, 5 of which match the published
// topic (SQL evaluated, WHERE passed, a `do_nothing` action run off the hot path), and again with
// the engine's hooks out (no rules), alternating rounds. The event loop is let run after every
// batch so the queued rule work is done inside the measured time. Prints the median ratio of the
// two throughputs over 16 adjacent pairs of rounds, and the rule work per published message in ns.
// Without sockets a publish costs a fraction of what it costs a broker serving clients, so this
// ratio is the rule engine's cost at its largest, a probe for changes to the engine; the goal (a
// broker's publish throughput with the rules at least 0.7 of it without) is measured end to end by
// bench/overhead.js (svc against svc-rules10, real clients over loopback).
// Usage: npm run build && node bench/rules-cost.js [--seconds 4]

import { makeMessage } from "../dist/broker/types.js";
import { ClusterKeys } from "../dist/cluster/keys.js";
import { MemoryStore } from "../dist/cluster/memory-store.js";
import { RuleEngine } from "../dist/rules/engine/engine.js";
import { benchBroker, secondsArg } from "./in-process.js";

const seconds = secondsArg(4);
const { broker, logger } = benchBroker();

// The rule engine on an in-memory store, with 10 rules: 5 match `bench/a/t`, 5 do not.
const store = new MemoryStore();
const engine = new RuleEngine({ broker, store, keys: new ClusterKeys("svc", "bench"), logger });
await engine.start({ activate: () => true, deactivate: () => true }, { set() {} });
const SQL = [
  // matching
  'SELECT * FROM "bench/a/t"',
  'SELECT payload, clientid, topic FROM "bench/+/t" WHERE qos = 0',
  "SELECT topic, qos, timestamp FROM \"bench/#\" WHERE topic =~ 'bench/+/t'",
  'SELECT clientid as c, upper(topic) as t FROM "bench/a/#"',
  "SELECT * FROM \"message.publish\" WHERE topic = 'bench/a/t'",
  // not matching
  'SELECT * FROM "other/a/t"',
  'SELECT * FROM "other/+/t"',
  'SELECT payload FROM "sensor/#"',
  'SELECT * FROM "bench/b/t"',
  'SELECT * FROM "$events/client_connected"',
];
let n = 0;
for (const rawsql of SQL) {
  n++;
  await engine.putRule({
    id: `rule:bench${n}`,
    rawsql,
    actions: [{ id: `do_nothing_${n}`, name: "do_nothing", params: {}, fallbacks: [] }],
    description: "",
    enabled: true,
    on_action_failed: "continue",
    created_at: Date.now() + n,
  });
}
const payload = Buffer.alloc(64, 120);
const tick = () => new Promise((r) => setImmediate(r));

async function run(ms) {
  const start = performance.now();
  const until = start + ms;
  let count = 0;
  while (performance.now() < until) {
    for (let i = 0; i < 500; i++) {
      broker.publish(makeMessage({ from: "p", topic: "bench/a/t", payload, qos: 0, retain: false }));
    }
    count += 500;
    // The rule work these publishes queued belongs to this round (nothing is dropped).
    do await tick();
    while (engine.backlog > 0);
  }
  return (count / (performance.now() - start)) * 1000;
}

const passed = () => {
  let p = 0;
  for (let i = 1; i <= 5; i++) p += engine.loadedRule(`rule:bench${i}`)?.metrics.passed ?? 0;
  return p;
};

engine.load();
await run(500); // warm up, with rules
engine.unload();
await run(500); // and without
// Many short pairs of rounds (with, then without): the machine's speed drifts, and the ratio of
// two adjacent rounds cancels the drift; the median of the pairs' ratios is the figure.
const PAIRS = 16;
const rounds = [];
for (let r = 0; r < PAIRS; r++) {
  engine.load();
  const before = passed();
  const withRules = await run((seconds * 1000) / (2 * PAIRS));
  const evaluated = passed() - before;
  engine.unload();
  const without = await run((seconds * 1000) / (2 * PAIRS));
  rounds.push({ withRules, without, evaluated, ratio: withRules / without });
}
const avg = (k) => rounds.reduce((a, r) => a + r[k], 0) / rounds.length;
const w = avg("withRules");
const wo = avg("without");
const sorted = rounds.map((r) => r.ratio).sort((a, b) => a - b);
const ratio = (sorted[PAIRS / 2 - 1] + sorted[PAIRS / 2]) / 2;
const ruleWorkNs = Math.round((1 / w - 1 / wo) * 1e9);
const failed = [...Array(10).keys()].reduce(
  (a, i) => a + (engine.loadedRule(`rule:bench${i + 1}`)?.metrics.failed ?? 0),
  0,
);
console.log(
  JSON.stringify({
    bench: "rules-cost",
    rules: 10,
    matching: 5,
    publishes_per_s_with_rules: Math.round(w),
    publishes_per_s_without: Math.round(wo),
    ratio: Number(ratio.toFixed(3)),
    ratio_range: [Number(sorted[0].toFixed(3)), Number(sorted[PAIRS - 1].toFixed(3))],
    rule_work_ns_per_publish: ruleWorkNs,
    rule_rows_passed_per_round: Math.round(avg("evaluated")),
    rule_failures: failed,
  }),
);
console.log(
  `rules cost on the publish path: throughput ratio ${ratio.toFixed(3)} with 10 rules (5 matching) vs none ` +
    `(${Math.round(w)} vs ${Math.round(wo)} publishes/s, 10 deliveries each, no socket; ` +
    `${ruleWorkNs} ns of rule work per publish; the 0.7 goal is end to end: bench/overhead.js)`,
);
await engine.stop();
await store.close();
process.exit(0);
