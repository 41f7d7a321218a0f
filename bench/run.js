// `npm run bench`: throughput of the broker under scenarios run by load generators in separate
// processes (the broker runs in its own process too). Prints a table, the machine it ran on, and
// one JSON line per figure. Usage: node bench/run.js [--duration 5] [--only fan-in,pairs]

import { fork, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import { join } from "node:path";

const args = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : dflt;
};
const duration = Number(opt("duration", "5")) * 1000;
const only = opt("only", "")?.split(",").filter(Boolean) ?? [];
const qosOnly = opt("qos", "");
/** `--prof DIR`: the broker writes a V8 CPU profile per scenario into DIR. */
const profDir = opt("prof", "");

const SCENARIOS = [
  { name: "fan-in", qos: 0, pubs: 10, subs: 1, pubTopic: "bench/in/{i}", subTopic: "bench/in/+", payload: 64 },
  { name: "fan-in", qos: 1, pubs: 10, subs: 1, pubTopic: "bench/in/{i}", subTopic: "bench/in/+", payload: 64 },
  { name: "fan-out", qos: 0, pubs: 1, subs: 10, pubTopic: "bench/out", subTopic: "bench/out", payload: 64 },
  { name: "fan-out", qos: 1, pubs: 1, subs: 10, pubTopic: "bench/out", subTopic: "bench/out", payload: 64 },
  { name: "pairs", qos: 0, pubs: 20, subs: 20, pubTopic: "bench/pair/{i}", subTopic: "bench/pair/{i}", payload: 64 },
  { name: "pairs", qos: 1, pubs: 20, subs: 20, pubTopic: "bench/pair/{i}", subTopic: "bench/pair/{i}", payload: 64 },
];

function startBroker() {
  const dataDir = mkdtempSync(join(os.tmpdir(), "svc-bench-"));
  const child = spawn(
    process.execPath,
    [
      ...(profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []),
      "bin/svc.js",
      "start",
      "--set",
      "log.level=info",
      "--set",
      `node.data_dir=${dataDir}`,
      "--set",
      "listener.tcp.external=127.0.0.1:0",
      "--set",
      "listener.ssl.external=off",
      "--set",
      "listener.ws.external=off",
      "--set",
      "listener.wss.external=off",
      "--set",
      "zone.external.max_mqueue_len=10000",
    ],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  return new Promise((resolve, reject) => {
    let out = "";
    child.stdout.on("data", (d) => {
      out += d;
      const m = /"listener":"mqtt:tcp:external","host":"[^"]+","port":(\d+)/.exec(out);
      if (m) {
        child.stdout.removeAllListeners("data");
        child.stdout.resume();
        resolve({ child, port: Number(m[1]), dataDir });
      }
    });
    child.once("exit", (code) => reject(new Error(`broker exited with ${code}: ${out}`)));
  });
}

function runWorker(job) {
  const w = fork(new URL("./load-worker.js", import.meta.url));
  const ready = new Promise((r) => w.once("message", r));
  w.send(job);
  return {
    ready,
    done: new Promise((resolve) => {
      w.on("message", (m) => {
        if (m.done) resolve(m);
      });
    }),
  };
}

async function runScenario(s, port) {
  const startAt = Date.now() + 1500;
  const base = { host: "127.0.0.1", port, qos: s.qos, payloadSize: s.payload, duration, startAt };
  // Subscribers in one process, publishers split over two.
  const subs = runWorker({ ...base, id: "s", role: "sub", count: s.subs, topicOf: s.subTopic, offset: 0 });
  await subs.ready;
  const half = Math.ceil(s.pubs / 2);
  const pubJobs = [
    { ...base, id: "p0", role: "pub", count: half, topicOf: s.pubTopic, offset: 0 },
    { ...base, id: "p1", role: "pub", count: s.pubs - half, topicOf: s.pubTopic, offset: half },
  ].filter((j) => j.count > 0);
  const pubs = pubJobs.map(runWorker);
  const results = await Promise.all([subs.done, ...pubs.map((p) => p.done)]);
  const [sub, ...pubRes] = results;
  const sent = pubRes.reduce((a, r) => a + r.sent, 0);
  const expected = s.name === "fan-out" ? sent * s.subs : sent;
  const clientCpu = results.reduce((a, r) => a + r.cpuMs, 0) / duration;
  return {
    scenario: s.name,
    qos: s.qos,
    payload: s.payload,
    delivered_per_s: Math.round(sub.inWindow / (duration / 1000)),
    sent,
    received: sub.received,
    lost: s.qos > 0 ? Math.max(0, expected - sub.received) : undefined,
    client_cpu_cores: Number(clientCpu.toFixed(2)),
  };
}

const machine = `${os.cpus()[0]?.model ?? "cpu"} x${os.cpus().length}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.platform()} ${os.release()}, node ${process.version}`;
const rows = [];
for (const s of SCENARIOS) {
  if (only.length > 0 && !only.includes(s.name)) continue;
  if (qosOnly !== "" && String(s.qos) !== qosOnly) continue;
  const b = await startBroker();
  try {
    const r = await runScenario(s, b.port);
    rows.push(r);
    console.log(JSON.stringify({ ...r, machine }));
  } finally {
    b.child.kill("SIGTERM");
    await new Promise((r) => b.child.once("exit", r));
    rmSync(b.dataDir, { recursive: true, force: true });
  }
}
console.log(`\nmachine: ${machine}, ${duration / 1000} s per scenario, 64 B payloads, MQTT 3.1.1\n`);
console.log("| scenario | QoS | delivered msg/s | lost | load-generator CPU (cores) |");
console.log("|---|---|---|---|---|");
for (const r of rows) {
  console.log(
    `| ${r.scenario} | ${r.qos} | ${r.delivered_per_s.toLocaleString("en")} | ${r.lost ?? "-"} | ${r.client_cpu_cores} |`,
  );
}
