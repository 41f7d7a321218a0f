// `npm run bench`: svc against its peers (Aedes, Mosquitto) in one run. For every scenario each
// broker runs in turn (svc, aedes, mosquitto, then the next scenario), each time in a fresh
// process of its own, driven by load generators in separate worker processes (bench/load-worker.js)
// that report their own CPU time. Prints one JSON line per figure (also written to
// bench/results/latest.jsonl), then one table with the figures, svc's ratio to each peer and the
// machine. `node bench/readme.js` puts that table into README.md.
//
// Bounded: every wait has a time limit; traffic stays on 127.0.0.0/8; every child process is
// killed and every temp dir removed on exit, on an error and on Ctrl-C.

import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from "node:fs";
import os from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { awaitRoutes, ETCD_INSTALL_HINT, etcdPath, NODE_NAMES, startCluster } from "./cluster.js";
import {
  at,
  bounds,
  brokerCpu,
  CORES,
  PUB_WINDOW,
  round2,
  round3,
  runFlow,
  setupAll,
  sleep,
  split,
  startWorker,
  sum,
} from "./load.js";
import {
  ALL_PEERS,
  brokerVersions,
  FLOOR_PEERS,
  mosquittoPath,
  RULES_PEERS,
  startBroker,
  svcNodeFlags,
  TRACING_PEERS,
} from "./peers/brokers.js";
import { canRaiseNofile, hardNofile, installCleanup, removeDir, rssBytes, tempDir } from "./procs.js";
import { renderReport } from "./report.js";
import {
  allScenarios,
  CLUSTER_SHAPES,
  CONN_COUNT,
  describe,
  flowPlan,
  LATENCY_COLD_SKIP_MS,
  LATENCY_WARMUP_MS,
  SCENARIO_KEYS,
} from "./scenarios.js";

const HERE = dirname(fileURLToPath(import.meta.url));

const USAGE = `Usage: npm run bench -- [options]     (or: node bench/run.js [options])

  --duration S      measured seconds per scenario and broker (default 5)
  --only A,B        scenarios: ${SCENARIO_KEYS.join(", ")} (default: all)
  --qos 0,1,2       QoS levels (default: all; with --qos, scenarios without a QoS
                    (conn-rate, memory) run only when named in --only)
  --peers A,B       brokers, in run order (default: svc,aedes,mosquitto,node-floor; mosquitto
                    only when on PATH); also svc-trace0, svc-trace1 and svc-trace100: svc with tracing on,
                    sampling 0%, 1% or 100%, exporting OTLP to a sink in the bench (the cost of
                    tracing end to end: the "svc vs svc-traceN" ratio), svc-trace1-run1 (1%,
                    telemetry.sampling_run = 1); svc-rules10: svc
                    with 10 rules, 5 matching every message (the "svc vs svc-rules10" ratio);
                    node-floor: no broker, a Node process relaying MQTT frames as they come
                    (latency, conn-rate and memory only): the least the runtime costs, for these
                    scenarios by default
  --full            also measure memory with 100,000 idle connections (needs ulimit -n
                    above 100,000 for the broker)
  --memory-connections N,M
                    the memory scenario's connection counts (default 10000; each needs
                    ulimit -n above it for the broker)
  --repeat N        runs each scenario N times, alternating the brokers (svc, peers, svc, peers...),
                    and reports each broker's median run (of an even N, the upper middle one); a
                    run with a loss or an error is reported instead (default 1)
  --out FILE        JSON lines output (default bench/results/latest.jsonl)
  --prof DIR        svc writes a V8 CPU profile per run into DIR
  --cluster-shape S the flow of the cluster scenario: ${CLUSTER_SHAPES.join(" or ")} (default pairs)
  --help

svc runs from dist/ (npm run build first). The cluster scenario (svc only, QoS 0 and 1) needs
the etcd binary on PATH (${ETCD_INSTALL_HINT}); without it the scenario is skipped.`;

// ---- options ---------------------------------------------------------------------------------

const argv = process.argv.slice(2);
if (argv.includes("--help") || argv.includes("-h")) {
  console.log(USAGE);
  process.exit(0);
}
const known = new Set([
  "--duration",
  "--only",
  "--qos",
  "--peers",
  "--full",
  "--memory-connections",
  "--repeat",
  "--out",
  "--prof",
  "--cluster-shape",
]);
for (const a of argv) {
  if (a.startsWith("--") && !known.has(a)) {
    console.error(`bench: unknown option ${a}\n\n${USAGE}`);
    process.exit(2);
  }
}
const opt = (name, dflt) => {
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : dflt;
};
const list = (s) =>
  (s ?? "")
    .split(",")
    .map((x) => x.trim())
    .filter(Boolean);
const durationS = Number(opt("duration", "5"));
if (!(durationS > 0 && durationS <= 600)) {
  console.error("bench: --duration must be in (0, 600] seconds");
  process.exit(2);
}
const duration = durationS * 1000;
const only = list(opt("only"));
for (const k of only) {
  if (!SCENARIO_KEYS.includes(k)) {
    console.error(`bench: unknown scenario ${k} (known: ${SCENARIO_KEYS.join(", ")})`);
    process.exit(2);
  }
}
const qosList = list(opt("qos")).map(Number);
if (qosList.some((q) => ![0, 1, 2].includes(q))) {
  console.error("bench: --qos takes 0, 1 and/or 2");
  process.exit(2);
}
const full = argv.includes("--full");
const memoryCounts = list(opt("memory-connections")).map(Number);
if (memoryCounts.some((n) => !Number.isInteger(n) || n < 1)) {
  console.error("bench: --memory-connections takes positive whole numbers");
  process.exit(2);
}
const repeat = Number(opt("repeat", "1"));
if (!Number.isInteger(repeat) || repeat < 1) {
  console.error("bench: --repeat takes a positive whole number");
  process.exit(2);
}
const outFile = resolve(opt("out", join(HERE, "results", "latest.jsonl")));
const profDir = opt("prof", "") ? resolve(opt("prof")) : "";
let peers = list(opt("peers"));
if (peers.length === 0) {
  peers = [...ALL_PEERS.filter((p) => p !== "mosquitto" || mosquittoPath()), ...Object.keys(FLOOR_PEERS)];
}
for (const p of peers) {
  const known = [...ALL_PEERS, ...Object.keys(TRACING_PEERS), ...Object.keys(RULES_PEERS), ...Object.keys(FLOOR_PEERS)];
  if (!known.includes(p)) {
    console.error(`bench: unknown peer ${p} (known: ${known.join(", ")})`);
    process.exit(2);
  }
}
if (peers.includes("mosquitto") && !mosquittoPath()) {
  console.error("bench: mosquitto is not on PATH (install Debian's mosquitto, or leave it out of --peers)");
  process.exit(2);
}

const clusterShape = opt("cluster-shape", "pairs");
if (!CLUSTER_SHAPES.includes(clusterShape)) {
  console.error(`bench: --cluster-shape takes ${CLUSTER_SHAPES.join(" or ")}`);
  process.exit(2);
}

const scenarios = allScenarios({ full, memoryCounts, clusterShape }).filter((s) => {
  if (only.length > 0 && !only.includes(s.key)) return false;
  if (qosList.length > 0) {
    if (s.qos === null) return only.includes(s.key);
    return qosList.includes(s.qos);
  }
  return true;
});

// ---- load parameters -------------------------------------------------------------------------

/** Source addresses of the connection scenarios: 127.0.0.10 .. 127.0.0.249. */
const SOURCE_ADDRS = Array.from({ length: 240 }, (_, i) => `127.0.0.${10 + i}`);
/** Connection attempts in flight per load-generator process. */
const CONN_CONCURRENCY = 50;
/**
 * Connection rate: rounds of CONN_COUNT connections opened and closed before the measured ones
 * (steady state; the first round is reported as "cold"), then CONN_MEASURED_ROUNDS rounds of which
 * the median (by rate) is the figure. Why four warm-up rounds: per round of 10,000 on svc, CPU time
 * of its threads from /proc/<pid>/task (us per connection, main thread + V8's background thread):
 * round 1 37 + 9, round 2 34 + 9, round 3 30 + 6, round 4 28 + 3, then 27-32 + 1-3. The background
 * thread is V8's optimizing compiler (perf: TurboFan jobs), still compiling the connect path
 * (Connection, openAndAck, the stream callbacks) through the third round. The load generators,
 * Node processes too, warm up the same way: Mosquitto's rate rises from its cold round as well
 * (about 16-17k/s cold, 20-22k/s after two rounds, 22-26k/s after four). Each round waits
 * CONN_SETTLE_MS after the previous round's connections are closed.
 */
const CONN_WARMUP_ROUNDS = 4;
const CONN_MEASURED_ROUNDS = 3;
const CONN_SETTLE_MS = 1000;
/** Connections per load-generator process in the memory scenario. */
const CONNS_PER_WORKER = 12_500;

const SETTINGS = [
  `svc: started as npm start starts it (node ${svcNodeFlags().join(" ")}), defaults, plus zone.external.max_mqueue_len = 10000 (the queue bound given to Mosquitto) and, in the connection-rate and memory scenarios, listener.tcp.external.max_conn_rate = 0 (default 1000/s); listeners other than MQTT/TCP, the management API and the dashboard off.`,
  "Mosquitto: listener on 127.0.0.1, allow_anonymous true, persistence false, max_inflight_messages 32 (svc's max_inflight), max_queued_messages 10000 (0, no bound, in a second run of a flow where it lost messages), max_queued_bytes 0, max_connections -1, set_tcp_nodelay true (svc: nodelay on), log_type error + warning.",
  "Aedes: defaults (Aedes.createBroker(), net.createServer(aedes.handle) on 127.0.0.1).",
  ...(scenarios.some((s) => s.kind === "cluster")
    ? [
        `Cluster scenario (svc only): etcd (binary from PATH, one member on 127.0.0.1, --heartbeat-interval 10 --election-timeout 50, data on /dev/shm); two svc nodes ${NODE_NAMES.join(" and ")} with the settings above plus cluster.discovery = etcd, cluster.etcd.node_ttl = 15s, rpc.tcp_server_port = 0 (inter-node link on loopback); the ${clusterShape} flow with its publishers on node 1 and its subscribers on node 2, started once a probe message crossed from node 1 to node 2 on every filter; ratio: deliveries/s of the 2 nodes over deliveries/s of one svc node running the same flow in the same run (both nodes and the load generators share the machine's cores).`,
      ]
    : []),
  `Load: subscribers in 1-2 processes, publishers in 1-2 processes; QoS 1/2 publishers keep ${PUB_WINDOW} publishes outstanding; every payload carries publisher id, sequence number and send time; latency: 1 publisher + 1 subscriber in one process, measured after ${LATENCY_WARMUP_MS / 1000} s of the flow (steady state), "cold": the same percentiles over the first ${durationS} s of the flow (from ${LATENCY_COLD_SKIP_MS} ms on) on the freshly started broker; connections: ${CONN_CONCURRENCY} attempts in flight per process, 2 processes (memory: one per ${CONNS_PER_WORKER.toLocaleString("en")}); connection rate: the median of ${CONN_MEASURED_ROUNDS} rounds of ${CONN_COUNT.toLocaleString("en")}, after ${CONN_WARMUP_ROUNDS} such rounds opened and closed on the same broker (steady state; "cold": the first round); source addresses 127.0.0.10-249; RSS from /proc/<pid>/status 1 s after start and 2 s after the last CONNACK (rss_connected in the JSON lines: at the last CONNACK).`,
];

/** Fields of a flow result kept for the single-node baseline of the cluster scenario. */
const BASELINE_FIELDS = [
  "status",
  "note",
  "value",
  "published",
  "lost",
  "dups",
  "unexpected",
  "unacked",
  "client_bound",
  "machine_bound",
  "broker_cpu",
  "client_cpu",
];

/**
 * The cluster scenario: the `s.shape` flow on one svc node, then on a 2-node cluster (etcd + two
 * svc processes; publishers on node 1, subscribers on node 2). Value: the cluster's deliveries/s;
 * `single_node`: the baseline; `ratio_to_single`: cluster / single node.
 */
async function runCluster(s, workers, live) {
  // 1. The baseline: the same flow on one node.
  const dir = tempDir("svc-bench-single-");
  let single;
  const baseWorkers = [];
  const stopSingle = async () => {
    await live.broker?.stop();
    live.broker = null;
    await Promise.all(baseWorkers.map((w) => w.exit()));
    removeDir(dir);
  };
  live.stop = stopSingle;
  try {
    live.broker = await startBroker("svc", { dir, profDir });
    single = await runFlow(s, live.broker, baseWorkers, { durationMs: duration, shape: s.shape });
  } catch (err) {
    single = { status: "error", note: `single node: ${String(err?.message ?? err).slice(0, 400)}` };
  } finally {
    await stopSingle();
  }
  const baseline = Object.fromEntries(
    BASELINE_FIELDS.filter((k) => single[k] !== undefined).map((k) => [k, single[k]]),
  );
  // 2. The cluster.
  let probe = null;
  let stopNodes = null;
  const stopCluster = async () => {
    probe?.close();
    probe = null;
    await stopNodes?.();
  };
  live.stop = stopCluster;
  try {
    const cluster = await startCluster({
      profDir,
      onStop: (f) => {
        stopNodes = f;
      },
    });
    const [n1, n2] = cluster.nodes;
    probe = await awaitRoutes({ plan: flowPlan(s.shape), pubPort: n1.port, subPort: n2.port });
    const r = await runFlow(s, { pubPort: n1.port, subPort: n2.port, pids: [n1.pid, n2.pid] }, workers, {
      durationMs: duration,
      shape: s.shape,
      // The probe held the routes until the scenario's subscribers hold them too.
      afterSubs: () => {
        probe.close();
        probe = null;
      },
    });
    const status =
      r.status === "failed" || single.status === "failed"
        ? "failed"
        : single.status !== "ok"
          ? single.status
          : r.status;
    const notes = [
      single.status !== "ok" ? `single node ${single.status}${single.note ? `: ${single.note}` : ""}` : null,
    ];
    if (r.status === "failed") notes.push("cluster run failed (lost/dup counts are the cluster's)");
    return {
      ...r,
      status,
      note: notes.filter(Boolean).join("; ") || undefined,
      ratio_to_single: single.status === "ok" && single.value > 0 ? round3(r.value / single.value) : null,
      single_node: baseline,
    };
  } catch (err) {
    return {
      status: "error",
      note: `cluster: ${String(err?.message ?? err).slice(0, 500)}`,
      single_node: baseline,
    };
  } finally {
    await stopCluster();
  }
}

async function runLatency(s, broker, workers) {
  const w = startWorker("lat");
  workers.push(w);
  const warmupMs = LATENCY_WARMUP_MS;
  await setupAll(
    [w],
    [
      {
        role: "lat",
        id: "l",
        host: "127.0.0.1",
        port: broker.port,
        qos: s.qos,
        payload: s.payload,
        topic: "bench/lat",
        rate: s.rate,
        warmupMs,
        coldSkipMs: LATENCY_COLD_SKIP_MS,
      },
    ],
  );
  const startAt = Date.now() + warmupMs + 300;
  const until = startAt + duration;
  const bcpu = brokerCpu(broker.pid);
  at(startAt, () => bcpu.start());
  at(until, () => bcpu.stop());
  w.send({ cmd: "start", startAt, until });
  const r = await w.next(warmupMs + duration + 30000, "latency result");
  const brokerCores = bcpu.stop();
  const lost = Math.max(0, r.sent - r.uniq);
  const failed = r.dups > 0 || r.foreign > 0 || (s.qos > 0 && (lost > 0 || r.unacked > 0));
  return {
    status: failed ? "failed" : "ok",
    metric: "latency_p99_ms",
    better: "lower",
    value: round3(r.p99),
    p50: round3(r.p50),
    p99: round3(r.p99),
    p999: round3(r.p999),
    max: round3(r.max),
    samples: r.samples,
    broker_us_per_msg: round2(bcpu.usPer(r.samples)),
    warmup_s: warmupMs / 1000,
    cold_p50: round3(r.cold.p50),
    cold_p99: round3(r.cold.p99),
    cold_p999: round3(r.cold.p999),
    cold_samples: r.cold.samples,
    published: r.sent,
    lost,
    dups: r.dups,
    unexpected: r.foreign,
    unacked: r.unacked,
    ...bounds([{ worker: "lat", cpu: r.cpu }], brokerCores),
  };
}

async function runConnections(s, broker, workers) {
  const memory = s.kind === "memory";
  const W = memory ? Math.max(2, Math.ceil(s.count / CONNS_PER_WORKER)) : 2;
  const counts = split(s.count, W).map((g) => g.length);
  const ws = counts.map((_, k) => startWorker(`conn${k}`, counts[k] + 1024));
  workers.push(...ws);
  await setupAll(
    ws,
    counts.map((count, k) => ({
      role: "conn",
      id: `c${k}`,
      host: "127.0.0.1",
      port: broker.port,
      count,
      addrs: SOURCE_ADDRS.filter((_, i) => i % W === k),
      concurrency: CONN_CONCURRENCY,
    })),
  );
  let rssBefore = null;
  if (memory) {
    await sleep(1000);
    rssBefore = rssBytes(broker.pid);
  }
  const first = await connectRound(ws, broker, 0, s.count);
  let errors = first.errors;
  let firstError = first.firstError;
  // Connection rate: after the cold round, rounds of the same count on the same broker, each
  // after the previous round's connections are closed; the median of the measured ones is the
  // steady-state figure.
  const measured = [];
  const rounds = memory ? 0 : CONN_WARMUP_ROUNDS + CONN_MEASURED_ROUNDS;
  for (let round = 1; round <= rounds && errors === 0; round++) {
    for (const w of ws) w.send({ cmd: "drop" });
    await Promise.all(ws.map((w) => w.next(60000 + s.count * 5, "drop")));
    await sleep(CONN_SETTLE_MS);
    const r = await connectRound(ws, broker, round, s.count);
    errors += r.errors;
    firstError ??= r.firstError;
    if (round > CONN_WARMUP_ROUNDS) measured.push(r);
  }
  const last = measured.length > 0 ? medianRound(measured) : first;
  const base = {
    status: errors > 0 ? "failed" : "ok",
    connections: last.ok,
    errors,
    note: firstError ? `${errors} connection(s) failed, first: ${firstError}` : undefined,
    connect_s: round2(last.elapsed / 1000),
    ...bounds(
      last.rs.map((r, k) => ({ worker: `conn${k}`, cpu: r.cpu })),
      last.brokerCores,
    ),
  };
  if (!memory) {
    return {
      ...base,
      warmup_connections: s.count * CONN_WARMUP_ROUNDS,
      rounds: measured.map((r) => ({ value: r.rate, broker_us_per_conn: round2(r.cpuUs) })),
      cold_value: first.rate,
      cold_connect_s: round2(first.elapsed / 1000),
      cold_broker_cpu: round3(first.brokerCores),
      broker_us_per_conn: round2(last.cpuUs),
      cold_broker_us_per_conn: round2(first.cpuUs),
      metric: "connacks_per_s",
      better: "higher",
      value: last.rate,
    };
  }
  const ok = last.ok;
  const rssConnected = rssBytes(broker.pid);
  await sleep(2000);
  const rssAfter = rssBytes(broker.pid);
  // The connect phase's CPU says nothing about an idle figure.
  return {
    ...base,
    client_bound: false,
    machine_bound: false,
    metric: "rss_bytes_per_connection",
    better: "lower",
    value: Math.round((rssAfter - rssBefore) / Math.max(1, ok)),
    rss_before: rssBefore,
    rss_connected: rssConnected,
    rss_after: rssAfter,
  };
}

/** The round of median rate (of an odd count; the upper middle of an even one). */
function medianRound(rounds) {
  return [...rounds].sort((a, b) => a.rate - b.rate)[Math.floor(rounds.length / 2)];
}

/** One round of `count` connections opened by the conn workers `ws`, timed and CPU-metered. */
async function connectRound(ws, broker, round, count) {
  const startAt = Date.now() + 300;
  const bcpu = brokerCpu(broker.pid);
  at(startAt, () => bcpu.start());
  for (const w of ws) w.send({ cmd: "start", startAt, round });
  const rs = await Promise.all(ws.map((w) => w.next(60000 + count * 5, "connection result")));
  const brokerCores = bcpu.stop();
  const ok = sum(rs.map((r) => r.ok));
  const elapsed = Math.max(...rs.map((r) => r.t1)) - Math.min(...rs.map((r) => r.t0));
  return {
    rs,
    brokerCores,
    ok,
    elapsed,
    rate: Math.round(ok / (elapsed / 1000)),
    cpuUs: bcpu.usPer(ok),
    errors: sum(rs.map((r) => r.errors)),
    firstError: rs.find((r) => r.firstError)?.firstError,
  };
}

/** One scenario on one broker, in a fresh broker process; never throws. */
async function runOne(s, peer, { mosquittoQueue } = {}) {
  const base = {
    type: "result",
    scenario: s.key,
    kind: s.kind,
    qos: s.qos,
    payload: s.payload,
    rate: s.rate,
    count: s.count,
    broker: peer,
    duration_s: durationS,
  };
  const conn = s.kind === "conn" || s.kind === "memory";
  const nofile = conn ? s.count + 1024 : 4096;
  if (conn && !canRaiseNofile(nofile)) {
    return {
      ...base,
      status: "skipped",
      note: `needs ulimit -n >= ${nofile} for the broker; the hard limit here is ${hardNofile()} (raise it, e.g. LimitNOFILE or ulimit -Hn as root, and rerun)`,
    };
  }
  if (s.kind === "cluster") {
    if (peer !== "svc" || !peers.includes("svc")) {
      return {
        ...base,
        shape: s.shape,
        status: "skipped",
        note: "the cluster scenario runs svc only: svc is not in --peers",
      };
    }
    if (!etcdPath()) {
      return {
        ...base,
        shape: s.shape,
        status: "skipped",
        note: `needs the etcd binary on PATH (${ETCD_INSTALL_HINT})`,
      };
    }
  }
  const dir = s.kind === "cluster" ? null : tempDir(`svc-bench-${peer}-`);
  const workers = [];
  let broker = null;
  let timer = null;
  /** What the cluster scenario has running, for a stop on a timeout (`stop`). */
  const live = { broker: null, stop: null };
  try {
    if (s.kind !== "cluster") {
      broker = await startBroker(peer, {
        dir,
        connScenario: conn,
        nofile,
        profDir: peer.startsWith("svc") ? profDir : "",
        mosquittoQueue,
      });
    }
    // The cluster scenario runs the flow twice (one node, then two) and starts etcd and 3 brokers.
    const limitMs = s.kind === "cluster" ? 2 * duration + 240000 : duration + 120000 + (conn ? s.count * 10 : 0);
    const run =
      s.kind === "cluster"
        ? runCluster(s, workers, live)
        : s.kind === "flow"
          ? runFlow(s, broker, workers, { durationMs: duration })
          : s.kind === "latency"
            ? runLatency(s, broker, workers)
            : runConnections(s, broker, workers);
    const timeout = new Promise((_, rej) => {
      timer = setTimeout(() => rej(new Error(`timed out after ${limitMs / 1000} s`)), limitMs);
    });
    const r = await Promise.race([run, timeout]);
    // A variant's own figures (svc-rules10: how many events its rules evaluated).
    const own = broker?.figures === undefined ? {} : await broker.figures().catch(() => ({}));
    return { ...base, ...(s.kind === "cluster" ? { shape: s.shape } : {}), ...r, ...own };
  } catch (err) {
    return { ...base, status: "error", note: String(err?.message ?? err).slice(0, 500) };
  } finally {
    clearTimeout(timer);
    // The broker first: its side of each connection then holds the TIME_WAIT, not the 127.0.0.x ports.
    if (broker) await broker.stop();
    await live.stop?.();
    await Promise.all(workers.map((w) => w.exit()));
    if (dir) removeDir(dir);
  }
}

/**
 * The run a repeated scenario reports for one broker: the first that is not ok (a loss is a failure,
 * not a figure), else the median by figure; every run's figure is kept in `runs`.
 */
function medianRun(runs) {
  const values = runs.map((r) => r.value ?? null);
  const bad = runs.find((r) => r.status !== "ok");
  if (bad !== undefined) return { ...bad, runs: values };
  const sorted = [...runs].sort((a, b) => a.value - b.value);
  return { ...sorted[Math.floor(sorted.length / 2)], runs: values };
}

// ---- main ------------------------------------------------------------------------------------

installCleanup();

function machine() {
  const model = /model name\s*:\s*(.+)/.exec(safeRead("/proc/cpuinfo"))?.[1] ?? os.cpus()[0]?.model ?? "unknown CPU";
  return {
    type: "machine",
    cpu: model.trim(),
    cores: CORES,
    memory_gib: Math.round(os.totalmem() / 2 ** 30),
    os: os.type(),
    kernel: os.release(),
    node: process.version,
    versions: brokerVersions(),
    peers,
    duration_s: durationS,
    full,
    repeat,
    args: argv,
    date: new Date().toISOString().slice(0, 10),
    settings: SETTINGS,
  };
}

function safeRead(f) {
  try {
    return readFileSync(f, "utf8");
  } catch {
    return "";
  }
}

if (peers.includes("svc") && !existsSync(join(HERE, "..", "dist", "cli", "svc.js"))) {
  console.error("bench: svc is not built (run `npm run build` first)");
  process.exit(2);
}
if (scenarios.length === 0) {
  console.error("bench: no scenario selected");
  process.exit(2);
}
const m = machine();
mkdirSync(dirname(outFile), { recursive: true });
const fd = openSync(outFile, "w");
const records = [m];
writeSync(fd, `${JSON.stringify(m)}\n`);
console.log(JSON.stringify(m));
/**
 * The cluster scenario is svc's alone: it runs once, as svc (skipped when svc is not in --peers).
 * A floor peer runs only the scenario kinds it can serve (its cells elsewhere stay empty).
 */
const brokersOf = (s) =>
  s.kind === "cluster" ? ["svc"] : peers.filter((p) => !(p in FLOOR_PEERS) || FLOOR_PEERS[p].has(s.kind));
const totalRuns = repeat * sum(scenarios.map((s) => brokersOf(s).length));
const emit = (r) => {
  records.push(r);
  const line = JSON.stringify(r);
  writeSync(fd, `${line}\n`);
  console.log(line);
};
let n = 0;
for (const s of scenarios) {
  const runsOf = new Map(brokersOf(s).map((p) => [p, []]));
  for (let round = 0; round < repeat; round++) {
    for (const peer of brokersOf(s)) {
      n++;
      process.stderr.write(`[${n}/${totalRuns}] ${describe(s)}${s.qos == null ? "" : `, QoS ${s.qos}`}: ${peer}\n`);
      let r = await runOne(s, peer);
      if (peer === "mosquitto" && s.kind === "flow" && r.status === "failed" && r.lost > 0 && !r.dups && !r.unacked) {
        // Mosquitto holds no publisher back: where they outrun the subscriber its queue overflows and
        // drops QoS 1/2 messages. Its figure then comes from a second run with the queue unbounded,
        // the first run kept in the record.
        process.stderr.write(`  lost ${r.lost} with its queue bounded: again with the queue unbounded\n`);
        r = { ...(await runOne(s, peer, { mosquittoQueue: 0 })), mosquitto_queue: "unbounded", bounded_run: r };
      }
      if (r.status === "skipped") process.stderr.write(`  SKIPPED: ${r.note}\n`);
      if (repeat === 1) emit(r);
      else {
        emit({ ...r, type: "run", round });
        runsOf.get(peer).push(r);
      }
    }
  }
  if (repeat > 1) for (const runs of runsOf.values()) emit(medianRun(runs));
}
closeSync(fd);
console.log(`\n${renderReport(records)}\n`);
console.log(`JSON lines: ${outFile}`);
process.exit(0);
