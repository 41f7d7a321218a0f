// One load-generator process, driven by bench/run.js over IPC:
//   parent -> {cmd:"setup", job}      worker -> {type:"ready"} | {type:"error", message}
//   parent -> {cmd:"start", startAt, until}
//   pub / lat / conn workers -> {type:"done", ...}
//   parent -> {cmd:"finish", expected, quietMs, capMs}    (sub workers) -> {type:"done", ...}
//   parent -> {cmd:"drop"}   (conn workers: close every connection; again "start" after) -> {type:"dropped"}
//   parent -> {cmd:"exit"}
// Every worker reports its own CPU time over the measured window (`cpu`: cores used, 1.0 = one
// core saturated), so the parent can tell when the load generator was the bottleneck.
//
// Roles: "sub" (subscribers that track every (publisher, sequence) they see), "pub" (publishers
// flooding at QoS 0/1/2, or publishing at a fixed rate), "lat" (one publisher and one subscriber
// in this process, at a fixed rate; end-to-end latency from the send time in the payload), "conn"
// (opens connections from several source addresses with bounded concurrency, then holds them idle).

import { connectRaw, Publisher, Tracker } from "./raw-client.js";

const sleepUntil = (t) => new Promise((r) => setTimeout(r, Math.max(0, t - Date.now())));

/** CPU meter over a window: cores used between start() and stop(). */
function cpuMeter() {
  let c0 = null;
  let t0 = 0;
  let result = null;
  return {
    start() {
      c0 = process.cpuUsage();
      t0 = performance.now();
    },
    stop() {
      if (c0 === null || result !== null) return;
      const c = process.cpuUsage(c0);
      const wall = performance.now() - t0;
      result = { cpu: (c.user + c.system) / 1000 / wall, wallMs: wall };
    },
    get value() {
      return result ?? { cpu: 0, wallMs: 0 };
    },
  };
}

let job = null;
const clients = [];
const publishers = [];
const conns = [];

async function setup(j) {
  job = j;
  const { host, port, role, id } = j;
  if (role === "sub") {
    for (const [k, filter] of j.filters.entries()) {
      const c = await connectRaw({ host, port, clientId: `bench-${id}-s${k}` });
      c.tracker = new Tracker(j.pubCount);
      await c.subscribe(filter, j.qos);
      clients.push(c);
    }
  } else if (role === "pub") {
    for (const [k, p] of j.pubs.entries()) {
      const c = await connectRaw({ host, port, clientId: `bench-${id}-p${k}` });
      clients.push(c);
      publishers.push(
        new Publisher(c, { pubId: p.pubId, topics: p.topics, qos: j.qos, payloadSize: j.payload, window: j.window }),
      );
    }
  } else if (role === "lat") {
    const sub = await connectRaw({ host, port, clientId: `bench-${id}-lat-s` });
    sub.tracker = new Tracker(1);
    await sub.subscribe(j.topic, j.qos);
    const pub = await connectRaw({ host, port, clientId: `bench-${id}-lat-p` });
    clients.push(sub, pub);
    publishers.push(new Publisher(pub, { pubId: 0, topics: [j.topic], qos: j.qos, payloadSize: j.payload }));
  }
  // "conn" opens its connections only at start.
}

async function runSub({ startAt, until }) {
  const meter = cpuMeter();
  const count = () => clients.reduce((a, c) => a + c.received, 0);
  let n0 = 0;
  let t0 = 0;
  await sleepUntil(startAt);
  meter.start();
  n0 = count();
  t0 = performance.now();
  await sleepUntil(until);
  meter.stop();
  const inWindow = count() - n0;
  const windowMs = performance.now() - t0;
  // Wait for the parent's "finish" (publishers done), then drain.
  const fin =
    finishMsg ??
    (await new Promise((r) => {
      finishWaiter = r;
    }));
  const expectedTotal = fin.expected.reduce((a, b) => a + b, 0);
  const uniq = () => clients.reduce((a, c) => a + c.tracker.uniq.reduce((x, y) => x + y, 0), 0);
  const capAt = Date.now() + fin.capMs;
  let last = count();
  let lastChange = Date.now();
  while (Date.now() < capAt) {
    if (uniq() >= expectedTotal) break;
    await new Promise((r) => setTimeout(r, 20));
    const n = count();
    if (n !== last) {
      last = n;
      lastChange = Date.now();
    } else if (Date.now() - lastChange >= fin.quietMs) break;
  }
  return {
    inWindow,
    windowMs,
    received: count(),
    perClient: clients.map((c) => ({ uniq: c.tracker.uniq, dups: c.tracker.dups, foreign: c.tracker.foreign })),
    ...meter.value,
  };
}

let finishWaiter = null;
let finishMsg = null;

async function runPub({ startAt, until }) {
  const meter = cpuMeter();
  await sleepUntil(startAt);
  meter.start();
  setTimeout(() => meter.stop(), Math.max(0, until - Date.now()));
  // A flood, or (job.rate) this worker's share of a fixed offered rate, split between its publishers.
  const results = await Promise.all(
    publishers.map((p) => (job.rate > 0 ? p.paced(job.rate / publishers.length, until) : p.flood(until))),
  );
  meter.stop();
  return {
    pubs: job.pubs.map((p, k) => ({ pubId: p.pubId, sent: results[k].sent, unacked: results[k].unacked })),
    ...meter.value,
  };
}

async function runLat({ startAt, until }) {
  const [sub] = clients;
  const [pub] = publishers;
  const size = Math.ceil(((until - startAt) / 1000) * job.rate * 1.5) + 1024;
  const samples = new Float64Array(size);
  let n = 0;
  // The cold window: as long as the measured one, from coldSkipMs after the flow starts.
  const cold = new Float64Array(size);
  let nc = 0;
  const from = performance.now() + (startAt - Date.now()); // samples sent before startAt are warm-up
  const coldFrom = from - job.warmupMs + job.coldSkipMs;
  const coldUntil = Math.min(from, coldFrom + (until - startAt));
  sub.onLatency = (ts) => {
    if (ts >= from) {
      if (n < samples.length) samples[n++] = performance.now() - ts;
    } else if (ts >= coldFrom && ts < coldUntil && nc < cold.length) cold[nc++] = performance.now() - ts;
  };
  const meter = cpuMeter();
  await sleepUntil(startAt - job.warmupMs);
  const r = await Promise.all([
    pub.paced(job.rate, until),
    sleepUntil(startAt).then(() => {
      meter.start();
      return sleepUntil(until).then(() => meter.stop());
    }),
  ]).then(([x]) => x);
  meter.stop();
  // Drain: wait for every message (QoS 1/2) or a quiet period.
  const capAt = Date.now() + 5000;
  let last = sub.received;
  let lastChange = Date.now();
  while (Date.now() < capAt && sub.tracker.uniq[0] < r.sent) {
    await new Promise((res) => setTimeout(res, 20));
    if (sub.received !== last) {
      last = sub.received;
      lastChange = Date.now();
    } else if (Date.now() - lastChange >= 1000) break;
  }
  const lat = samples.subarray(0, n).sort();
  const pct = (q) => (n === 0 ? null : lat[Math.min(n - 1, Math.floor(q * n))]);
  const clat = cold.subarray(0, nc).sort();
  const cpct = (q) => (nc === 0 ? null : clat[Math.min(nc - 1, Math.floor(q * nc))]);
  return {
    sent: r.sent,
    unacked: r.unacked,
    uniq: sub.tracker.uniq[0],
    dups: sub.tracker.dups[0],
    foreign: sub.tracker.foreign,
    samples: n,
    p50: pct(0.5),
    p99: pct(0.99),
    p999: pct(0.999),
    max: n === 0 ? null : lat[n - 1],
    cold: { samples: nc, p50: cpct(0.5), p99: cpct(0.99), p999: cpct(0.999) },
    ...meter.value,
  };
}

async function runConn({ startAt, round = 0 }) {
  const { host, port, count, addrs, concurrency, id } = job;
  const meter = cpuMeter();
  await sleepUntil(startAt);
  meter.start();
  const t0 = Date.now();
  let next = 0;
  let errors = 0;
  let firstError = null;
  const lane = async () => {
    while (next < count) {
      const i = next++;
      try {
        const c = await connectRaw({
          host,
          port,
          clientId: `bench-${id}-r${round}-c${i}`,
          localAddress: addrs[i % addrs.length],
        });
        c.sock.removeAllListeners("data"); // idle from now on
        conns.push(c);
      } catch (err) {
        errors++;
        firstError ??= String(err?.message ?? err);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, count) }, lane));
  const t1 = Date.now();
  meter.stop();
  return { ok: conns.length, errors, firstError, t0, t1, ...meter.value };
}

/** Closes every connection "conn" opened and resolves once all of them are closed. */
async function dropConns() {
  const open = conns.filter((c) => !c.sock.destroyed);
  const closed = open.map((c) => new Promise((r) => c.sock.once("close", r)));
  for (const c of open) c.close();
  await Promise.all(closed);
  conns.length = 0;
}

process.on("message", async (m) => {
  try {
    if (m.cmd === "setup") {
      await setup(m.job);
      process.send({ type: "ready" });
    } else if (m.cmd === "start") {
      const role = job.role;
      const r =
        role === "sub"
          ? await runSub(m)
          : role === "pub"
            ? await runPub(m)
            : role === "lat"
              ? await runLat(m)
              : await runConn(m);
      process.send({ type: "done", ...r });
    } else if (m.cmd === "drop") {
      await dropConns();
      process.send({ type: "dropped" });
    } else if (m.cmd === "finish") {
      finishMsg = m;
      finishWaiter?.(m);
    } else if (m.cmd === "exit") {
      for (const c of clients) c.close();
      for (const c of conns) c.close();
      process.exit(0);
    }
  } catch (err) {
    process.send({ type: "error", message: String(err?.stack ?? err) });
  }
});
// The parent is gone (crash, Ctrl-C): leave at once.
process.on("disconnect", () => process.exit(0));
