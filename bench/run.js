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
import { ALL_PEERS, brokerVersions, mosquittoPath, RULES_PEERS, startBroker, TRACING_PEERS } from "./peers/brokers.js";
import {
  canRaiseNofile,
  cpuMs,
  hardNofile,
  installCleanup,
  removeDir,
  rssBytes,
  spawnWithNofile,
  stopChild,
  tempDir,
} from "./procs.js";
import { renderReport } from "./report.js";
import { allScenarios, CLUSTER_SHAPES, describe, expectedMatrix, flowPlan, SCENARIO_KEYS } from "./scenarios.js";

const HERE = dirname(fileURLToPath(import.meta.url));

const USAGE = `Usage: npm run bench -- [options]     (or: node bench/run.js [options])

  --duration S      measured seconds per scenario and broker (default 5)
  --only A,B        scenarios: ${SCENARIO_KEYS.join(", ")} (default: all)
  --qos 0,1,2       QoS levels (default: all; with --qos, scenarios without a QoS
                    (conn-rate, memory) run only when named in --only)
  --peers A,B       brokers, in run order (default: svc,aedes,mosquitto; mosquitto only
                    when on PATH); also svc-trace0, svc-trace1 and svc-trace100: svc with tracing on,
                    sampling 0%, 1% or 100%, exporting OTLP to a sink in the bench (the cost of
                    tracing end to end: the "svc vs svc-traceN" ratio); svc-rules10: svc
                    with 10 rules, 5 matching every message (the "svc vs svc-rules10" ratio)
  --full            also measure memory with 100,000 idle connections (needs ulimit -n
                    above 100,000 for the broker)
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
const known = new Set(["--duration", "--only", "--qos", "--peers", "--full", "--out", "--prof", "--cluster-shape"]);
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
const outFile = resolve(opt("out", join(HERE, "results", "latest.jsonl")));
const profDir = opt("prof", "") ? resolve(opt("prof")) : "";
let peers = list(opt("peers"));
if (peers.length === 0) peers = ALL_PEERS.filter((p) => p !== "mosquitto" || mosquittoPath());
for (const p of peers) {
  if (!ALL_PEERS.includes(p) && !(p in TRACING_PEERS) && !(p in RULES_PEERS)) {
    const known = [...ALL_PEERS, ...Object.keys(TRACING_PEERS), ...Object.keys(RULES_PEERS)];
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

const scenarios = allScenarios({ full, clusterShape }).filter((s) => {
  if (only.length > 0 && !only.includes(s.key)) return false;
  if (qosList.length > 0) {
    if (s.qos === null) return only.includes(s.key);
    return qosList.includes(s.qos);
  }
  return true;
});

// ---- load parameters -------------------------------------------------------------------------

/**
 * Outstanding QoS 1/2 publishes per publisher: the brokers' in-flight limit (svc max_inflight and
 * Mosquitto max_inflight_messages, 32), the Receive Maximum an MQTT 5 client would be given.
 * (Mosquitto 2.0.11 silently drops incoming QoS 2 messages of a 3.1.1 client beyond that limit,
 * while still completing PUBREC/PUBREL/PUBCOMP for them.)
 */
const PUB_WINDOW = 32;
/** Source addresses of the connection scenarios: 127.0.0.10 .. 127.0.0.249. */
const SOURCE_ADDRS = Array.from({ length: 240 }, (_, i) => `127.0.0.${10 + i}`);
/** Connection attempts in flight per load-generator process. */
const CONN_CONCURRENCY = 50;
/** Connections per load-generator process in the memory scenario. */
const CONNS_PER_WORKER = 12_500;
/** Above this share of one core, a load-generator process is the bottleneck. */
const SATURATED = 0.9;
const CORES = os.cpus().length;

const SETTINGS = [
  "svc: defaults, plus zone.external.max_mqueue_len = 10000 (the queue bound given to Mosquitto) and, in the connection-rate and memory scenarios, listener.tcp.external.max_conn_rate = 0 (default 1000/s); listeners other than MQTT/TCP, the management API and the dashboard off.",
  "Mosquitto: listener on 127.0.0.1, allow_anonymous true, persistence false, max_inflight_messages 32 (svc's max_inflight), max_queued_messages 10000, max_queued_bytes 0, max_connections -1, set_tcp_nodelay true (svc: nodelay on), log_type error + warning.",
  "Aedes: defaults (Aedes.createBroker(), net.createServer(aedes.handle) on 127.0.0.1).",
  ...(scenarios.some((s) => s.kind === "cluster")
    ? [
        `Cluster scenario (svc only): etcd (binary from PATH, one member on 127.0.0.1, --heartbeat-interval 10 --election-timeout 50, data on /dev/shm); two svc nodes ${NODE_NAMES.join(" and ")} with the settings above plus cluster.discovery = etcd, cluster.etcd.node_ttl = 15s, rpc.tcp_server_port = 0 (inter-node link on loopback); the ${clusterShape} flow with its publishers on node 1 and its subscribers on node 2, started once a probe message crossed from node 1 to node 2 on every filter; ratio: deliveries/s of the 2 nodes over deliveries/s of one svc node running the same flow in the same run (both nodes and the load generators share the machine's cores).`,
      ]
    : []),
  `Load: subscribers in 1-2 processes, publishers in 1-2 processes; QoS 1/2 publishers keep ${PUB_WINDOW} publishes outstanding; every payload carries publisher id, sequence number and send time; latency: 1 publisher + 1 subscriber in one process, 500 ms warm-up not counted; connections: ${CONN_CONCURRENCY} attempts in flight per process, 2 processes (memory: one per ${CONNS_PER_WORKER.toLocaleString("en")}), source addresses 127.0.0.10-249; RSS from /proc/<pid>/status 1 s after start and 2 s after the last CONNACK.`,
];

// ---- workers ---------------------------------------------------------------------------------

const WORKER = join(HERE, "load-worker.js");

function startWorker(name, nofile = 4096) {
  const child = spawnWithNofile(process.execPath, [WORKER], nofile, { stdio: ["ignore", "inherit", "inherit", "ipc"] });
  const inbox = [];
  let waiter = null;
  let exitErr = null;
  const deliver = () => {
    if (!waiter) return;
    if (inbox.length > 0) {
      const m = inbox.shift();
      const w = waiter;
      waiter = null;
      if (m.type === "error") w.reject(new Error(`worker ${name}: ${m.message}`));
      else w.resolve(m);
    } else if (exitErr) {
      const w = waiter;
      waiter = null;
      w.reject(exitErr);
    }
  };
  child.on("message", (m) => {
    inbox.push(m);
    deliver();
  });
  child.once("exit", (code, sig) => {
    exitErr = new Error(`worker ${name} exited (${code ?? sig})`);
    deliver();
  });
  return {
    name,
    send(m) {
      if (child.connected) child.send(m);
    },
    /** The next message from the worker, within `timeoutMs`. */
    next(timeoutMs, what = "reply") {
      return new Promise((res, rej) => {
        const t = setTimeout(() => {
          waiter = null;
          rej(new Error(`worker ${name}: no ${what} within ${timeoutMs} ms`));
        }, timeoutMs);
        waiter = {
          resolve: (m) => {
            clearTimeout(t);
            res(m);
          },
          reject: (e) => {
            clearTimeout(t);
            rej(e);
          },
        };
        deliver();
      });
    },
    async exit() {
      if (child.connected) child.send({ cmd: "exit" });
      await stopChild(child, 3000);
    },
  };
}

async function setupAll(ws, jobs) {
  for (const [k, w] of ws.entries()) w.send({ cmd: "setup", job: jobs[k] });
  await Promise.all(ws.map((w) => w.next(60000, "setup")));
}

/** Splits 0..n-1 into `parts` contiguous groups. */
function split(n, parts) {
  const out = [];
  for (let k = 0, from = 0; k < parts; k++) {
    const size = Math.floor(n / parts) + (k < n % parts ? 1 : 0);
    out.push(Array.from({ length: size }, (_, i) => from + i));
    from += size;
  }
  return out;
}

/** Broker CPU (cores used) between start() and stop(). */
function brokerCpu(pid) {
  let c0 = 0;
  let t0 = 0;
  let v = null;
  return {
    start() {
      c0 = cpuMs(pid);
      t0 = performance.now();
    },
    stop() {
      if (v === null) v = (cpuMs(pid) - c0) / (performance.now() - t0);
      return v;
    },
    get value() {
      return v;
    },
  };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const at = (t, f) => setTimeout(f, Math.max(0, t - Date.now()));
const sum = (a) => a.reduce((x, y) => x + y, 0);
const round2 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 100) / 100);
const round3 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 1000) / 1000);

/** `broker`: cores used by the broker, or an array with those of each node of a cluster. */
function bounds(clientCpus, broker) {
  const nodes = Array.isArray(broker) ? broker : [broker];
  const client_bound = clientCpus.some((c) => c.cpu > SATURATED);
  const total = sum(nodes) + sum(clientCpus.map((c) => c.cpu));
  const machine_bound = !client_bound && nodes.every((b) => b < SATURATED) && total > SATURATED * CORES;
  return {
    client_bound,
    machine_bound,
    broker_cpu: round2(sum(nodes)),
    ...(Array.isArray(broker) ? { node_cpu: nodes.map(round2) } : {}),
    client_cpu: clientCpus.map((c) => ({ worker: c.worker, cpu: round2(c.cpu) })),
  };
}

// ---- scenarios -------------------------------------------------------------------------------

/**
 * A flow scenario. `target`: `{ pubPort, subPort, pids }` (publishers connect to pubPort,
 * subscribers to subPort; pids: the broker process(es) whose CPU is measured), or one broker
 * handle for both. `shape`: the plan (default the scenario's key); `afterSubs`: called once every
 * subscriber is subscribed.
 */
async function runFlow(s, target, workers, { shape = s.key, afterSubs = null } = {}) {
  const plan = flowPlan(shape);
  const P = plan.pubs.length;
  const C = plan.subs.length;
  const subGroups = split(C, Math.min(2, C));
  const pubGroups = split(P, Math.min(2, P));
  const host = "127.0.0.1";
  const { pubPort, subPort, pids } =
    target.pids === undefined ? { pubPort: target.port, subPort: target.port, pids: [target.pid] } : target;
  const subWs = subGroups.map((_, k) => startWorker(`sub${k}`));
  workers.push(...subWs);
  await setupAll(
    subWs,
    subGroups.map((g, k) => ({
      role: "sub",
      id: `s${k}`,
      host,
      port: subPort,
      qos: s.qos,
      filters: g.map((c) => plan.subs[c]),
      pubCount: P,
    })),
  );
  await afterSubs?.();
  const pubWs = pubGroups.map((_, k) => startWorker(`pub${k}`));
  workers.push(...pubWs);
  await setupAll(
    pubWs,
    pubGroups.map((g, k) => ({
      role: "pub",
      id: `p${k}`,
      host,
      port: pubPort,
      qos: s.qos,
      payload: s.payload,
      window: PUB_WINDOW,
      pubs: g.map((p) => ({ pubId: p, topics: plan.pubs[p].map((t) => plan.topics[t]) })),
    })),
  );
  const startAt = Date.now() + 500;
  const until = startAt + duration;
  const bcpus = pids.map(brokerCpu);
  at(startAt, () => {
    for (const b of bcpus) b.start();
  });
  at(until, () => {
    for (const b of bcpus) b.stop();
  });
  for (const w of [...subWs, ...pubWs]) w.send({ cmd: "start", startAt, until });
  const pubRes = await Promise.all(pubWs.map((w) => w.next(duration + 30000, "publisher result")));
  const sent = new Array(P).fill(0);
  let unacked = 0;
  for (const r of pubRes) {
    for (const p of r.pubs) {
      sent[p.pubId] = p.sent;
      unacked += p.unacked;
    }
  }
  const expected = expectedMatrix(plan, sent);
  for (const [k, w] of subWs.entries()) {
    w.send({
      cmd: "finish",
      qos: s.qos,
      expected: subGroups[k].map((c) => sum(expected[c])),
      quietMs: s.qos > 0 ? 2000 : 500,
      // QoS 0 losses are informative only: no long wait for a deep backlog.
      capMs: s.qos > 0 ? 15000 : 3000,
    });
  }
  const subRes = await Promise.all(subWs.map((w) => w.next(60000, "subscriber result")));
  let lost = 0;
  let dups = 0;
  let unexpected = 0;
  let rate = 0;
  let received = 0;
  subRes.forEach((r, k) => {
    rate += r.inWindow / (r.windowMs / 1000);
    received += r.received;
    r.perClient.forEach((pc, j) => {
      const c = subGroups[k][j];
      for (let p = 0; p < P; p++) {
        const e = expected[c][p];
        lost += Math.max(0, e - pc.uniq[p]);
        unexpected += Math.max(0, pc.uniq[p] - e);
        dups += pc.dups[p];
      }
      unexpected += pc.foreign;
    });
  });
  const clientCpus = [
    ...subRes.map((r, k) => ({ worker: `sub${k}`, cpu: r.cpu })),
    ...pubRes.map((r, k) => ({ worker: `pub${k}`, cpu: r.cpu })),
  ];
  const failed = dups > 0 || unexpected > 0 || (s.qos > 0 && (lost > 0 || unacked > 0));
  return {
    status: failed ? "failed" : "ok",
    metric: "deliveries_per_s",
    better: "higher",
    value: Math.round(rate),
    published_per_s: Math.round(sum(sent) / durationS),
    published: sum(sent),
    expected: sum(expected.map(sum)),
    received,
    lost,
    dups,
    unexpected,
    unacked,
    ...bounds(clientCpus, target.pids === undefined ? bcpus[0].stop() : bcpus.map((b) => b.stop())),
  };
}

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
    single = await runFlow(s, live.broker, baseWorkers, { shape: s.shape });
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
  const warmupMs = 500;
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
      },
    ],
  );
  const startAt = Date.now() + warmupMs + 300;
  const until = startAt + duration;
  const bcpu = brokerCpu(broker.pid);
  at(startAt, () => bcpu.start());
  at(until, () => bcpu.stop());
  w.send({ cmd: "start", startAt, until });
  const r = await w.next(duration + 30000, "latency result");
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
    published: r.sent,
    lost,
    dups: r.dups,
    unexpected: r.foreign,
    unacked: r.unacked,
    ...bounds([{ worker: "lat", cpu: r.cpu }], bcpu.stop()),
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
  const startAt = Date.now() + 300;
  const bcpu = brokerCpu(broker.pid);
  at(startAt, () => bcpu.start());
  for (const w of ws) w.send({ cmd: "start", startAt });
  const rs = await Promise.all(ws.map((w) => w.next(60000 + s.count * 5, "connection result")));
  const brokerCores = bcpu.stop();
  const ok = sum(rs.map((r) => r.ok));
  const errors = sum(rs.map((r) => r.errors));
  const elapsed = Math.max(...rs.map((r) => r.t1)) - Math.min(...rs.map((r) => r.t0));
  const firstError = rs.find((r) => r.firstError)?.firstError;
  const base = {
    status: errors > 0 ? "failed" : "ok",
    connections: ok,
    errors,
    note: firstError ? `${errors} connection(s) failed, first: ${firstError}` : undefined,
    connect_s: round2(elapsed / 1000),
    ...bounds(
      rs.map((r, k) => ({ worker: `conn${k}`, cpu: r.cpu })),
      brokerCores,
    ),
  };
  if (!memory) return { ...base, metric: "connacks_per_s", better: "higher", value: Math.round(ok / (elapsed / 1000)) };
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
    rss_after: rssAfter,
  };
}

/** One scenario on one broker, in a fresh broker process; never throws. */
async function runOne(s, peer) {
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
      });
    }
    // The cluster scenario runs the flow twice (one node, then two) and starts etcd and 3 brokers.
    const limitMs = s.kind === "cluster" ? 2 * duration + 240000 : duration + 120000 + (conn ? s.count * 10 : 0);
    const run =
      s.kind === "cluster"
        ? runCluster(s, workers, live)
        : s.kind === "flow"
          ? runFlow(s, broker, workers)
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
/** The cluster scenario is svc's alone: it runs once, as svc (skipped when svc is not in --peers). */
const brokersOf = (s) => (s.kind === "cluster" ? ["svc"] : peers);
const totalRuns = sum(scenarios.map((s) => brokersOf(s).length));
let n = 0;
for (const s of scenarios) {
  for (const peer of brokersOf(s)) {
    n++;
    process.stderr.write(`[${n}/${totalRuns}] ${describe(s)}${s.qos == null ? "" : `, QoS ${s.qos}`}: ${peer}\n`);
    const r = await runOne(s, peer);
    if (r.status === "skipped") process.stderr.write(`  SKIPPED: ${r.note}\n`);
    records.push(r);
    const line = JSON.stringify(r);
    writeSync(fd, `${line}\n`);
    console.log(line);
  }
}
closeSync(fd);
console.log(`\n${renderReport(records)}\n`);
console.log(`JSON lines: ${outFile}`);
process.exit(0);
