// The end-to-end cost of a feature: svc against svc with the feature on (svc-rules10: 10 rules, 5
// matching every message; svc-trace0 / svc-trace1 / svc-trace100: tracing sampled at 0%, 1% or
// 100%; svc-trace1-run1: 1% without sampling runs), with real clients over loopback, interleaved.
// This machine's speed drifts and jumps between modes far apart (from one process to the next, and
// within one process over seconds), by more than the costs measured here; so the brokers compared
// run side by side:
//   - a set: svc and each variant started together, each in a fresh process, all of them running;
//   - in it, windows: the same flow (fresh load-generator processes) runs against each broker in
//     turn, for --duration seconds each, the order turning from window to window;
//   - a window gives one ratio per variant (the variant's publishes/s over svc's, measured seconds
//     apart), and the figure is the median over every window of every set; the ratio of the sums
//     and each set's ratio are reported too;
//   - with --together, each window runs the flow against every broker at the same time instead
//     (each with its own load generators; the brokers share the machine, so the throughputs are not
//     the brokers' best): the same machine speed for all, and the figure to read is the ratio of
//     broker CPU per publish, the throughput ratio a broker bound by its core would show;
//   - with --rate N, the publishers offer N publishes/s in all instead of flooding: no broker is
//     saturated, and its CPU per publish is its cost at that load (with --together, the most precise
//     figure here: the same load at the same time, none of the feedback of brokers at their limit).
//   - before a set's windows, --warmup seconds of the same flow against every broker at once, not
//     counted (what a fresh process pays once is not a cost per publish): 30 by default, since V8
//     keeps optimizing a path that runs for 1% of the messages for tens of seconds (a sampled
//     message's cost, in process at 20,000 publishes/s: 71 us the first 10 s, 37 us after 50 s);
// A run with a loss or a duplicate is a failure, not a figure.
// Usage: npm run build && node bench/overhead.js [--variants svc-rules10,svc-trace1]
//          [--only fan-in,fan-out,pairs] [--qos 0] [--payloads 64,16384] [--sets 3] [--windows 6]
//          [--duration 2] [--warmup 30] [--together] [--rate N] [--out FILE]

import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { round3, runFlow } from "./load.js";
import { RULES_PEERS, startBroker, TRACING_PEERS } from "./peers/brokers.js";
import { installCleanup, removeDir, tempDir } from "./procs.js";
import { allScenarios, describe } from "./scenarios.js";

const HERE = dirname(fileURLToPath(import.meta.url));
/** The goal of each variant's ratio (the rule engine's and the observability issue's). */
const GOALS = { "svc-rules10": 0.7, "svc-trace1": 0.95 };

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const variants = opt("variants", "svc-rules10,svc-trace1").split(",").filter(Boolean);
const only = opt("only", "fan-in,fan-out,pairs").split(",").filter(Boolean);
const qos = opt("qos", "0").split(",").map(Number);
const payloads = opt("payloads", "").split(",").filter(Boolean).map(Number);
const sets = Number(opt("sets", "3"));
const windows = Number(opt("windows", "6"));
const durationMs = Number(opt("duration", "2")) * 1000;
const warmupMs = Number(opt("warmup", "30")) * 1000;
const out = opt("out", join(HERE, "results", "overhead.jsonl"));
const together = argv.includes("--together");
// Publishes/s offered to each broker (0: the publishers flood).
const offered = Number(opt("rate", "0"));
// "svc" as a variant: a second svc, the control (its ratio shows what the method's noise alone gives).
const unknown = variants.filter((v) => v !== "svc" && !(v in TRACING_PEERS) && !(v in RULES_PEERS));
if (
  !(sets >= 1) ||
  !(windows >= 1) ||
  !(durationMs >= 500) ||
  !(warmupMs >= 0) ||
  !(offered >= 0) ||
  variants.length === 0 ||
  unknown.length > 0
) {
  console.error(
    "overhead: --sets and --windows must be at least 1, --duration at least 0.5, --warmup at least 0, --rate a number of publishes/s, and --variants name" +
      ` variants of svc (${[...Object.keys(TRACING_PEERS), ...Object.keys(RULES_PEERS)].join(", ")})`,
  );
  process.exit(2);
}
const scenarios = allScenarios({}).filter(
  (s) =>
    s.kind === "flow" &&
    only.includes(s.key) &&
    qos.includes(s.qos) &&
    (payloads.length === 0 || payloads.includes(s.payload)),
);
if (scenarios.length === 0) {
  console.error(`overhead: no flow scenario in --only ${only.join(",")} at --qos ${qos.join(",")}`);
  process.exit(2);
}

installCleanup();

/** An await that returns once `n` callers reached it (flows run together start their windows at once). */
function meeting(n) {
  let arrived = 0;
  let open;
  const all = new Promise((resolve) => {
    open = resolve;
  });
  return () => {
    if (++arrived === n) open();
    return all;
  };
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};

/**
 * One set: svc and the variants side by side; per broker (svc first, then the variants in order),
 * the results of its windows in order.
 */
async function runSet(s, set) {
  const names = ["svc", ...variants];
  const dirs = names.map((n) => tempDir(`svc-overhead-${n}-`));
  const brokers = [];
  const results = names.map(() => []);
  const own = [];
  try {
    for (const [k, n] of names.entries()) brokers.push(await startBroker(n, { dir: dirs[k] }));
    // Warm-up, not counted: what a fresh process pays once (compiling the paths the flow takes, a
    // variant's first spans and exports loading the HTTP client, the collections of what starting
    // left behind) is not a cost per publish, and it fell on the first windows of a set only.
    if (warmupMs > 0) {
      const workers = [];
      try {
        await Promise.all(brokers.map((b) => runFlow(s, b, workers, { durationMs: warmupMs, offered })));
      } finally {
        await Promise.all(workers.map((x) => x.exit()));
      }
    }
    for (let w = 0; w < windows; w++) {
      if (together) {
        // Every broker under the same flow at the same time: the same machine speed for all.
        const workers = [];
        const beforeStart = meeting(names.length);
        try {
          const rs = await Promise.all(
            brokers.map((b) => runFlow(s, b, workers, { durationMs, beforeStart, offered })),
          );
          for (const [k, r] of rs.entries()) results[k].push(r);
        } finally {
          await Promise.all(workers.map((x) => x.exit()));
        }
        continue;
      }
      // The order turns, so that no broker always runs first in a window (or right after another).
      const turn = (w + set) % names.length;
      for (const k of [...names.keys()].map((i) => (i + turn) % names.length)) {
        const workers = [];
        try {
          results[k].push(await runFlow(s, brokers[k], workers, { durationMs, offered }));
        } finally {
          await Promise.all(workers.map((x) => x.exit()));
        }
      }
    }
    // A variant's own figures over the set (svc-rules10: how many events its rules evaluated).
    for (const b of brokers) own.push(b.figures === undefined ? {} : await b.figures().catch(() => ({})));
  } finally {
    for (const b of brokers) await b.stop();
    for (const d of dirs) removeDir(d);
  }
  return { results, own };
}

const lines = [];
for (const s of scenarios) {
  const label = `${s.key} ${s.payload} B QoS ${s.qos}`;
  const perSet = [];
  for (let set = 0; set < sets; set++) {
    process.stderr.write(`${describe(s)}, QoS ${s.qos}: set ${set + 1} of ${sets}\n`);
    perSet.push(await runSet(s, set));
  }
  for (const [i, v] of variants.entries()) {
    const windowRatios = [];
    const setRatios = [];
    const cpu = [];
    const evaluated = [];
    const totals = { base: 0, x: 0 };
    let failures = 0;
    for (const { results, own } of perSet) {
      const setSums = { base: 0, x: 0 };
      results[0].forEach((base, w) => {
        const x = results[i + 1][w];
        if (base.status !== "ok" || x.status !== "ok") {
          failures++;
          return;
        }
        windowRatios.push(x.published_per_s / base.published_per_s);
        cpu.push(base.broker_cpu / base.published_per_s / (x.broker_cpu / x.published_per_s));
        setSums.base += base.published_per_s;
        setSums.x += x.published_per_s;
      });
      if (setSums.base > 0) setRatios.push(setSums.x / setSums.base);
      totals.base += setSums.base;
      totals.x += setSums.x;
      if (typeof own[i + 1].rules_evaluated === "number") evaluated.push(own[i + 1].rules_evaluated);
    }
    const line = {
      bench: "overhead",
      scenario: label,
      variant: v,
      sets,
      windows: windowRatios.length,
      window_s: durationMs / 1000,
      warmup_s: warmupMs / 1000,
      together,
      offered_per_s: offered,
      failures,
      throughput_ratio: windowRatios.length > 0 ? round3(median(windowRatios)) : null,
      sum_ratio: totals.base > 0 ? round3(totals.x / totals.base) : null,
      set_ratios: setRatios.map(round3),
      window_ratios: windowRatios.map(round3),
      cpu_per_publish_ratio: cpu.length > 0 ? round3(median(cpu)) : null,
      cpu_window_ratios: cpu.map(round3),
      svc_published_per_s: Math.round(totals.base / Math.max(1, windowRatios.length)),
      goal: GOALS[v] ?? null,
    };
    // svc-rules10: the share of the matching rules' events evaluated (the rest refused by a full
    // queue: QoS 0 publishers have no acknowledgement to hold back).
    if (evaluated.length > 0) line.rules_evaluated = round3(median(evaluated));
    lines.push(line);
    console.log(JSON.stringify(line));
  }
}
writeFileSync(out, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
console.log(
  "\n| scenario | variant | windows | throughput ratio (median of windows) | ratio of sums | per set | CPU per publish ratio (median) | rule events evaluated | goal |",
);
console.log("|---|---|---|---|---|---|---|---|---|");
const f = (x) => (x === null ? "-" : x.toFixed(3));
for (const l of lines) {
  const fail = l.failures > 0 ? ` (${l.failures} failed)` : "";
  console.log(
    `| ${l.scenario} | ${l.variant} | ${l.windows}${fail} | ${f(l.throughput_ratio)} | ${f(l.sum_ratio)} | ${l.set_ratios.map(f).join(" ")} | ${f(l.cpu_per_publish_ratio)} | ${l.rules_evaluated ?? "-"} | ${l.goal ?? "-"} |`,
  );
}
console.log(
  "\nratios: variant over svc (publishes/s of windows run side by side), and svc's broker CPU per publish over the variant's; 1.000 = no cost.",
);
process.exit(0);
