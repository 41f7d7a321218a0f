// The end-to-end cost of a feature: svc against svc with the feature on (svc-rules10: 10 rules, 5
// matching every message; svc-trace1 / svc-trace100: tracing sampled at 1% / 100%), run by
// bench/run.js with real clients over loopback, in alternating rounds. Each round runs every
// scenario for svc and for each variant (the order turning from round to round), in fresh
// processes; a round gives one ratio per variant
// and scenario (the variant's publishes/s over svc's, and svc's broker CPU per publish over the
// variant's), and the figure is the median over the rounds: the machine's speed drifts between
// rounds, and the ratio of two runs a few seconds apart cancels most of the drift. A run with a
// loss or a duplicate is a failure, not a figure.
// Usage: npm run build && node bench/overhead.js [--variants svc-rules10,svc-trace1]
//          [--only fan-in,fan-out,pairs] [--qos 0] [--rounds 6] [--duration 5] [--out FILE]
//          (rounds: best a multiple of the number of brokers, so each runs in each place as often)

import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { removeDir, tempDir } from "./procs.js";

const HERE = dirname(fileURLToPath(import.meta.url));
/** The goal of each variant's ratio (the rule engine's and the observability issue's). */
const GOALS = { "svc-rules10": 0.7, "svc-trace1": 0.95 };

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const variants = opt("variants", "svc-rules10,svc-trace1").split(",").filter(Boolean);
const only = opt("only", "fan-in,fan-out,pairs");
const qos = opt("qos", "0");
const rounds = Number(opt("rounds", "6"));
const duration = opt("duration", "5");
const out = opt("out", join(HERE, "results", "overhead.jsonl"));
if (!(rounds >= 1) || variants.length === 0) {
  console.error("overhead: --rounds must be at least 1 and --variants name at least one variant");
  process.exit(2);
}

const dir = tempDir("svc-overhead-");
/** Per "scenario payload qos": per round, broker -> its result line. */
const runs = new Map();
try {
  for (let r = 0; r < rounds; r++) {
    const file = join(dir, `round-${r}.jsonl`);
    const args = [join(HERE, "run.js"), "--duration", duration, "--only", only, "--qos", qos];
    // The brokers' order turns from round to round, so that no broker always runs first or last
    // (a broker run late in a round runs on a warmer, busier machine).
    const order = ["svc", ...variants];
    const turned = [...order.slice(r % order.length), ...order.slice(0, r % order.length)];
    args.push("--peers", turned.join(","), "--out", file);
    const res = spawnSync(process.execPath, args, { stdio: ["ignore", "ignore", "inherit"] });
    if (res.status !== 0) throw new Error(`bench/run.js exited with ${res.status ?? res.signal} in round ${r + 1}`);
    for (const line of readFileSync(file, "utf8").trim().split("\n")) {
      const x = JSON.parse(line);
      if (x.type !== "result") continue;
      const key = `${x.scenario} ${x.payload} B QoS ${x.qos}`;
      if (!runs.has(key)) runs.set(key, []);
      const perRound = runs.get(key);
      perRound[r] ??= {};
      perRound[r][x.broker] = x;
    }
    console.error(`round ${r + 1} of ${rounds} done`);
  }
} finally {
  removeDir(dir);
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return (s[(s.length - 1) >> 1] + s[s.length >> 1]) / 2;
};
const r3 = (x) => Number(x.toFixed(3));
const lines = [];
for (const [scenario, perRound] of runs) {
  for (const v of variants) {
    const throughput = [];
    const cpu = [];
    const evaluated = [];
    const best = { base: 0, x: 0 };
    let failures = 0;
    for (const round of perRound) {
      const base = round?.svc;
      const x = round?.[v];
      if (base === undefined || x === undefined) continue;
      if (base.status !== "ok" || x.status !== "ok") {
        failures++;
        continue;
      }
      throughput.push(x.published_per_s / base.published_per_s);
      best.base = Math.max(best.base, base.published_per_s);
      best.x = Math.max(best.x, x.published_per_s);
      if (typeof x.rules_evaluated === "number") evaluated.push(x.rules_evaluated);
      cpu.push(base.broker_cpu / base.published_per_s / (x.broker_cpu / x.published_per_s));
    }
    const line = {
      bench: "overhead",
      scenario,
      variant: v,
      rounds: throughput.length,
      failures,
      throughput_ratio: throughput.length > 0 ? r3(median(throughput)) : null,
      throughput_ratios: throughput.map(r3),
      // The best run of each over the rounds: where the machine's speed swings between runs
      // (two modes, far apart), each side's best is a run in the fast mode.
      best_throughput_ratio: best.base > 0 ? r3(best.x / best.base) : null,
      cpu_per_publish_ratio: cpu.length > 0 ? r3(median(cpu)) : null,
      cpu_per_publish_ratios: cpu.map(r3),
      goal: GOALS[v] ?? null,
    };
    // svc-rules10: the share of the matching rules' events evaluated (the rest refused by a full
    // queue: QoS 0 publishers have no acknowledgement to hold back).
    if (evaluated.length > 0) line.rules_evaluated = r3(median(evaluated));
    lines.push(line);
    console.log(JSON.stringify(line));
  }
}
writeFileSync(out, `${lines.map((l) => JSON.stringify(l)).join("\n")}\n`);
console.log(
  "\n| scenario | variant | rounds | throughput ratio (median) | best over best | CPU per publish ratio (median) | rule events evaluated | goal |",
);
console.log("|---|---|---|---|---|---|---|---|");
for (const l of lines) {
  const f = (x) => (x === null ? "-" : x.toFixed(3));
  const fail = l.failures > 0 ? ` (${l.failures} failed)` : "";
  console.log(
    `| ${l.scenario} | ${l.variant} | ${l.rounds}${fail} | ${f(l.throughput_ratio)} | ${f(l.best_throughput_ratio)} | ${f(l.cpu_per_publish_ratio)} | ${l.rules_evaluated ?? "-"} | ${l.goal ?? "-"} |`,
  );
}
console.log(
  "\nratios: variant over svc (publishes/s), and svc's broker CPU per publish over the variant's; 1.000 = no cost.",
);
