// The load side of a bench run: load-generator worker processes (bench/load-worker.js) driven over
// IPC, the broker's CPU over a window, and the flow scenarios (publishers and subscribers on
// topic plans, losses and duplicates counted). Used by bench/run.js and bench/overhead.js.

import os from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { cpuMs, spawnWithNofile, stopChild } from "./procs.js";
import { expectedMatrix, flowPlan } from "./scenarios.js";

const HERE = dirname(fileURLToPath(import.meta.url));

/**
 * Outstanding QoS 1/2 publishes per publisher: the brokers' in-flight limit (svc max_inflight and
 * Mosquitto max_inflight_messages, 32), the Receive Maximum an MQTT 5 client would be given.
 * (Mosquitto 2.0.11 silently drops incoming QoS 2 messages of a 3.1.1 client beyond that limit,
 * while still completing PUBREC/PUBREL/PUBCOMP for them.)
 */
export const PUB_WINDOW = 32;
/** Above this share of one core, a load-generator process is the bottleneck. */
export const SATURATED = 0.9;
export const CORES = os.cpus().length;

const WORKER = join(HERE, "load-worker.js");

export function startWorker(name, nofile = 4096) {
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

export async function setupAll(ws, jobs) {
  for (const [k, w] of ws.entries()) w.send({ cmd: "setup", job: jobs[k] });
  await Promise.all(ws.map((w) => w.next(60000, "setup")));
}

/** Splits 0..n-1 into `parts` contiguous groups. */
export function split(n, parts) {
  const out = [];
  for (let k = 0, from = 0; k < parts; k++) {
    const size = Math.floor(n / parts) + (k < n % parts ? 1 : 0);
    out.push(Array.from({ length: size }, (_, i) => from + i));
    from += size;
  }
  return out;
}

/** Broker CPU (cores used) between start() and stop(); usPer(n): its CPU µs per event of n. */
export function brokerCpu(pid) {
  let c0 = 0;
  let t0 = 0;
  let v = null;
  let used = null;
  return {
    start() {
      c0 = cpuMs(pid);
      t0 = performance.now();
    },
    stop() {
      if (v === null) {
        used = cpuMs(pid) - c0;
        v = used / (performance.now() - t0);
      }
      return v;
    },
    get value() {
      return v;
    },
    usPer(n) {
      return used === null || !(n > 0) ? null : (used * 1000) / n;
    },
  };
}

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
export const at = (t, f) => setTimeout(f, Math.max(0, t - Date.now()));
export const sum = (a) => a.reduce((x, y) => x + y, 0);
export const round2 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 100) / 100);
export const round3 = (x) => (x == null || Number.isNaN(x) ? null : Math.round(x * 1000) / 1000);

/** `broker`: cores used by the broker, or an array with those of each node of a cluster. */
export function bounds(clientCpus, broker) {
  const nodes = Array.isArray(broker) ? broker : [broker];
  const client_bound = clientCpus.some((c) => c.cpu > SATURATED);
  const total = sum(nodes) + sum(clientCpus.map((c) => c.cpu));
  const machine_bound = !client_bound && nodes.every((b) => b < SATURATED) && total > SATURATED * CORES;
  return {
    client_bound,
    machine_bound,
    broker_cpu: round3(sum(nodes)),
    ...(Array.isArray(broker) ? { node_cpu: nodes.map(round3) } : {}),
    client_cpu: clientCpus.map((c) => ({ worker: c.worker, cpu: round2(c.cpu) })),
  };
}

/**
 * A flow scenario. `target`: `{ pubPort, subPort, pids }` (publishers connect to pubPort,
 * subscribers to subPort; pids: the broker process(es) whose CPU is measured), or one broker
 * handle for both. `shape`: the plan (default the scenario's key); `afterSubs`: called once every
 * subscriber is subscribed; `beforeStart`: awaited once every client is ready, right before the
 * window is scheduled (flows run together wait there for each other); `durationMs`: the measured
 * window; `offered`: publishes/s offered by all publishers together (0: they flood).
 */
export async function runFlow(
  s,
  target,
  workers,
  { durationMs, shape = s.key, afterSubs = null, beforeStart = null, offered = 0 },
) {
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
      rate: (offered * g.length) / P,
      pubs: g.map((p) => ({ pubId: p, topics: plan.pubs[p].map((t) => plan.topics[t]) })),
    })),
  );
  await beforeStart?.();
  const startAt = Date.now() + 500;
  const until = startAt + durationMs;
  const bcpus = pids.map(brokerCpu);
  at(startAt, () => {
    for (const b of bcpus) b.start();
  });
  at(until, () => {
    for (const b of bcpus) b.stop();
  });
  for (const w of [...subWs, ...pubWs]) w.send({ cmd: "start", startAt, until });
  const pubRes = await Promise.all(pubWs.map((w) => w.next(durationMs + 30000, "publisher result")));
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
    published_per_s: Math.round(sum(sent) / (durationMs / 1000)),
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
