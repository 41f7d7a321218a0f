// The brokers under test, each started fresh in its own process for every scenario run:
//   svc        node bin/svc.js start (dist/ must be built), defaults plus the overrides below
//   aedes      bench/peers/aedes-server.js (Aedes defaults, plain TCP server)
//   mosquitto  Debian's mosquitto binary with a generated configuration (below)
//   node-floor bench/peers/node-floor.js: no broker, the runtime's floor (some scenarios only)
// Each listens on 127.0.0.1 on a free port. startBroker() resolves with { name, pid, port, stop }.

import { execFileSync, spawnSync } from "node:child_process";
import { accessSync, constants, existsSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import { delimiter, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { spawnWithNofile, stopChild } from "../procs.js";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

export const ALL_PEERS = ["svc", "aedes", "mosquitto"];

/**
 * svc with `telemetry.tracing = on`, named in --peers only (never by default): the OTLP/HTTP
 * protobuf exporter sends to a sink in the bench process that answers 200 (spans really built,
 * batched, encoded and sent), with OTEL_TRACES_SAMPLER=parentbased_traceidratio at this ratio. The
 * table's "svc vs svc-traceN" ratio is then the throughput without tracing over the one with it.
 * svc-trace0 samples nothing: the cost of tracing being on (SDK loaded, one draw per publish).
 * svc-trace1-run1 samples 1% with `telemetry.sampling_run = 1` (every root drawn on its own, no
 * runs): against svc-trace1, what sampling in runs saves.
 */
export const TRACING_PEERS = { "svc-trace0": 0, "svc-trace1": 0.01, "svc-trace100": 1, "svc-trace1-run1": 0.01 };
/** Settings of a tracing variant beyond `telemetry.tracing = on`. */
const TRACING_SETTINGS = { "svc-trace1-run1": { "telemetry.sampling_run": "1" } };

/**
 * svc-rules10 (named in --peers only): svc with 10 enabled rules created through the management
 * API before the run, 5 of which match every bench topic (`bench/...`: SQL evaluated, WHERE
 * passed, a do_nothing action run) and 5 of which match none, the rule engine issue's benchmark
 * shape (bench/rules-cost.js measures the same rules in-process). "svc vs svc-rules10" is then
 * the throughput without rules over the one with them.
 */
export const RULES_PEERS = { "svc-rules10": true };

export const BENCH_RULES = [
  // matching every bench topic
  'SELECT * FROM "bench/#"',
  'SELECT payload, clientid, topic FROM "bench/#" WHERE qos >= 0',
  "SELECT topic, qos, timestamp FROM \"bench/#\" WHERE topic =~ 'bench/#'",
  'SELECT clientid as c, upper(topic) as t FROM "#"',
  "SELECT * FROM \"message.publish\" WHERE topic =~ 'bench/#'",
  // matching none
  'SELECT * FROM "other/a/t"',
  'SELECT * FROM "other/+/t"',
  'SELECT payload FROM "sensor/#"',
  'SELECT * FROM "benchmark/#"',
  'SELECT * FROM "$events/client_connected"',
];

/**
 * node-floor (in the default peers): a Node process that relays MQTT frames with no broker behind
 * them (bench/peers/node-floor.js), run in the scenario kinds listed here only; "svc vs node-floor"
 * is then how far svc is from the least the runtime costs for the same work.
 */
export const FLOOR_PEERS = { "node-floor": new Set(["latency", "conn", "memory"]) };

/**
 * svc settings the bench changes, besides the listener address and data dir (listeners other than
 * MQTT/TCP, the management API and the dashboard are switched off so that no fixed port is bound):
 * - zone.external.max_mqueue_len = 10000 (default 1000): the same queue bound as Mosquitto's
 *   max_queued_messages below.
 * - listener.tcp.external.max_conn_rate = 0 (default 1000/s), for the connection-rate and memory
 *   scenarios only: the default rate limit would be the figure otherwise.
 */
export const SVC_SETTINGS = { "zone.external.max_mqueue_len": "10000" };
export const SVC_CONN_SETTINGS = { "listener.tcp.external.max_conn_rate": "0" };

/**
 * Mosquitto's configuration, chosen to match svc's defaults: in-flight window 32 (svc
 * zone.max_inflight = 32), queue 10,000 messages per client (svc as configured above), no
 * persistence (svc keeps sessions in memory), Nagle off (svc listener nodelay = true), no
 * connection limit, logging limited to errors and warnings (svc logs nothing per connection at
 * its default level). `queue` 0: no bound (the second run of a flow it lost messages in, run.js).
 */
export const MOSQUITTO_QUEUE = 10_000;

export function mosquittoConf(port, queue = MOSQUITTO_QUEUE) {
  return [
    `listener ${port} 127.0.0.1`,
    "allow_anonymous true",
    "persistence false",
    "max_inflight_messages 32",
    `max_queued_messages ${queue}`,
    "max_queued_bytes 0",
    "max_connections -1",
    "set_tcp_nodelay true",
    "log_dest stderr",
    "log_type error",
    "log_type warning",
    "",
  ].join("\n");
}

export function mosquittoPath() {
  const dirs = [...(process.env.PATH ?? "").split(delimiter), "/usr/sbin", "/usr/local/sbin", "/sbin"];
  for (const d of dirs) {
    if (!d) continue;
    const p = join(d, "mosquitto");
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
}

/** Versions of the brokers (null when unavailable). */
export function brokerVersions() {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  let git = "";
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--", "src"], { cwd: ROOT, encoding: "utf8" }).trim();
    git = ` (${sha}${dirty ? ", src modified" : ""})`;
  } catch {}
  let aedes = null;
  try {
    aedes = JSON.parse(readFileSync(join(ROOT, "node_modules", "aedes", "package.json"), "utf8")).version;
  } catch {}
  let mosquitto = null;
  const mp = mosquittoPath();
  if (mp) {
    const out = spawnSync(mp, ["-h"], { encoding: "utf8" });
    mosquitto = /mosquitto version (\S+)/.exec(`${out.stdout}${out.stderr}`)?.[1] ?? "unknown";
  }
  return { svc: `${pkg.version}${git}`, aedes, mosquitto };
}

/** The Node flags `npm start` gives svc (package.json: `node <flags> bin/svc.js start`). */
export function svcNodeFlags() {
  const start = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).scripts.start.split(/\s+/);
  return start.slice(1, start.indexOf("bin/svc.js"));
}

/** Keys the built svc knows (unknown keys stop svc at start, so optional ones are checked). */
function svcKnows(key) {
  try {
    return readFileSync(join(ROOT, "dist", "config", "schema.js"), "utf8").includes(`"${key}"`);
  } catch {
    return false;
  }
}

function tail(s) {
  return s.length > 2000 ? `...${s.slice(-2000)}` : s;
}

/**
 * Starts one broker. `dir`: a temp dir for its data/config; `connScenario`: the connection-rate
 * or memory scenario runs (svc: no connection rate limit); `nofile`: open files it may need;
 * `profDir`: svc only, write a V8 CPU profile there; `settings`: svc only, more `--set` overrides
 * (the cluster scenario's node name and cluster keys).
 */
export async function startBroker(
  name,
  { dir, connScenario = false, nofile = 4096, profDir = "", settings = {}, mosquittoQueue = MOSQUITTO_QUEUE },
) {
  if (name === "svc") return startSvc({ dir, connScenario, nofile, profDir, extra: settings });
  if (name in TRACING_PEERS) return startTracedSvc(name, TRACING_PEERS[name], { dir, connScenario, nofile, profDir });
  if (name in RULES_PEERS) return startRulesSvc(name, { dir, connScenario, nofile, profDir });
  if (name === "aedes") return startScriptPeer("aedes", "aedes-server.js", nofile);
  if (name in FLOOR_PEERS) return startScriptPeer(name, `${name}.js`, nofile);
  if (name === "mosquitto") return startMosquitto({ dir, nofile, queue: mosquittoQueue });
  throw new Error(`unknown broker ${name}`);
}

/** Collects a child's output (bounded) and resolves when `match` finds what it waits for. */
function waitForOutput(child, streams, match, what, timeoutMs = 30000) {
  return new Promise((resolve, reject) => {
    let out = "";
    let done = false;
    const timer = setTimeout(
      () => finish(new Error(`${what}: not ready after ${timeoutMs} ms: ${tail(out)}`)),
      timeoutMs,
    );
    const finish = (err, value) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (err) reject(err);
      else resolve(value);
    };
    for (const s of streams) {
      s.on("data", (d) => {
        if (out.length < 65536) out += d;
        if (!done) {
          const v = match(out);
          if (v !== undefined) finish(null, v);
        }
      });
    }
    child.once("exit", (code, sig) =>
      finish(new Error(`${what} exited (${code ?? sig}) before it was ready: ${tail(out)}`)),
    );
  });
}

function handle(name, child, port) {
  return { name, pid: child.pid, port, child, stop: () => stopChild(child, 5000) };
}

/** An OTLP/HTTP receiver that accepts every export (and counts the bytes it was sent). */
async function otlpSink() {
  const http = await import("node:http");
  let bytes = 0;
  const server = http.createServer((req, res) => {
    req.on("data", (d) => {
      bytes += d.length;
    });
    req.on("end", () => {
      res.writeHead(200, { "content-type": "application/x-protobuf" });
      res.end();
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  return {
    port: server.address().port,
    bytes: () => bytes,
    close: () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

async function startTracedSvc(name, ratio, { dir, connScenario, nofile, profDir }) {
  const sink = await otlpSink();
  const env = {
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: String(ratio),
    OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${sink.port}`,
  };
  try {
    const extra = { "telemetry.tracing": "on", ...TRACING_SETTINGS[name] };
    const h = await startSvc({ dir, connScenario, nofile, profDir, extra, env });
    return {
      ...h,
      name,
      stop: async () => {
        await h.stop();
        await sink.close();
      },
    };
  } catch (err) {
    await sink.close();
    throw err;
  }
}

async function startRulesSvc(name, { dir, connScenario, nofile, profDir }) {
  const h = await startSvc({
    dir,
    connScenario,
    nofile,
    profDir,
    extra: { "management.listener.http": "127.0.0.1:0" },
    apiPort: true,
  });
  try {
    const auth = `Basic ${Buffer.from("admin:public").toString("base64")}`;
    for (const rawsql of BENCH_RULES) {
      const res = await fetch(`http://127.0.0.1:${h.apiPort}/api/v4/rules`, {
        method: "POST",
        headers: { authorization: auth, "content-type": "application/json" },
        body: JSON.stringify({ rawsql, actions: [{ name: "do_nothing", params: {} }] }),
      });
      const body = await res.json();
      if (body.code !== 0) throw new Error(`svc-rules10: rule not created: ${JSON.stringify(body)}`);
    }
  } catch (err) {
    await h.stop();
    throw err;
  }
  return { ...h, name, figures: () => rulesFigures(h.apiPort) };
}

/**
 * What the rules did over the run (warm-up included), summed over the rules that match the bench
 * topics: events evaluated (passed) and events whose evaluation was refused by a full queue
 * (failed), and the share evaluated.
 */
async function rulesFigures(apiPort) {
  const auth = `Basic ${Buffer.from("admin:public").toString("base64")}`;
  const res = await fetch(`http://127.0.0.1:${apiPort}/api/v4/rules`, { headers: { authorization: auth } });
  const body = await res.json();
  let passed = 0;
  let failed = 0;
  for (const r of body.data ?? []) {
    if (!BENCH_RULES.slice(0, 5).includes(r.rawsql)) continue;
    for (const m of r.metrics ?? []) {
      passed += m.passed;
      failed += m.failed;
    }
  }
  const total = passed + failed;
  return {
    rules_passed: passed,
    rules_failed: failed,
    rules_evaluated: total > 0 ? Number((passed / total).toFixed(4)) : null,
  };
}

async function startSvc({ dir, connScenario, nofile, profDir, extra, env: more = {}, apiPort = false }) {
  if (!existsSync(join(ROOT, "dist", "cli", "svc.js"))) throw new Error("svc is not built: run `npm run build` first");
  const conf = join(dir, "svc.conf");
  writeFileSync(conf, "# bench: defaults only; overrides on the command line\n");
  const settings = {
    "node.data_dir": join(dir, "data"),
    "listener.tcp.external": "127.0.0.1:0",
    "listener.ssl.external": "off",
    "listener.ws.external": "off",
    "listener.wss.external": "off",
    ...SVC_SETTINGS,
    ...(connScenario ? SVC_CONN_SETTINGS : {}),
  };
  for (const k of ["management.listener.http", "management.listener.http_v2", "dashboard.listener.http"]) {
    if (svcKnows(k)) settings[k] = "off";
  }
  if (svcKnows("rpc.tcp_server_port")) settings["rpc.tcp_server_port"] = "0";
  Object.assign(settings, extra);
  const args = [
    ...svcNodeFlags(),
    ...(profDir ? ["--cpu-prof", `--cpu-prof-dir=${profDir}`] : []),
    join(ROOT, "bin", "svc.js"),
    "start",
    "--config",
    conf,
    ...Object.entries(settings).flatMap(([k, v]) => ["--set", `${k}=${v}`]),
  ];
  // No SVC_* variable of the caller's environment leaks into the broker.
  const env = {
    ...Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("SVC_") && !k.startsWith("OTEL_"))),
    ...more,
  };
  const child = spawnWithNofile(process.execPath, args, nofile, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] });
  const ports = await waitForOutput(
    child,
    [child.stdout, child.stderr],
    (out) => {
      const m = /"listener":"mqtt:tcp:external","host":"[^"]+","port":(\d+)/.exec(out);
      const a = /"listener":"http:management:[^"]*","host":"[^"]+","port":(\d+)/.exec(out);
      if (m === null || (apiPort && a === null)) return undefined;
      return { port: Number(m[1]), api: a === null ? 0 : Number(a[1]) };
    },
    "svc",
  );
  return { ...handle("svc", child, ports.port), apiPort: ports.api };
}

/** A peer that is a Node script of bench/peers/ printing {"port":N,...} once it listens. */
async function startScriptPeer(name, script, nofile) {
  const child = spawnWithNofile(process.execPath, [join(ROOT, "bench", "peers", script)], nofile, {
    stdio: ["pipe", "pipe", "pipe"],
  });
  const port = await waitForOutput(
    child,
    [child.stdout, child.stderr],
    (out) => {
      const m = /"port":(\d+)/.exec(out);
      return m ? Number(m[1]) : undefined;
    },
    name,
  );
  return handle(name, child, port);
}

function freePort() {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => resolve(port));
    });
  });
}

function canConnect(port) {
  return new Promise((resolve) => {
    const s = net.connect({ host: "127.0.0.1", port });
    s.once("connect", () => {
      s.destroy();
      resolve(true);
    });
    s.once("error", () => resolve(false));
  });
}

async function startMosquitto({ dir, nofile, queue }) {
  const bin = mosquittoPath();
  if (!bin) throw new Error("mosquitto is not on PATH");
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const conf = join(dir, "mosquitto.conf");
    writeFileSync(conf, mosquittoConf(port, queue));
    const child = spawnWithNofile(bin, ["-c", conf], nofile, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    const onData = (d) => {
      if (out.length < 65536) out += d;
    };
    child.stdout.on("data", onData);
    child.stderr.on("data", onData);
    let exited = false;
    child.once("exit", () => {
      exited = true;
    });
    const deadline = Date.now() + 10000;
    while (!exited && Date.now() < deadline) {
      if (await canConnect(port)) return handle("mosquitto", child, port);
      await new Promise((r) => setTimeout(r, 50));
    }
    await stopChild(child, 1000);
    // The free port may have been taken in between: try again a few times.
    if (attempt >= 2) throw new Error(`mosquitto did not start: ${tail(out)}`);
  }
}
