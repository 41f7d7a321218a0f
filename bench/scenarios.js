// The benchmark's scenarios and the bookkeeping that turns what subscribers saw into losses and
// duplicates. A "flow" scenario is a plan: a list of topic names, for each publisher the topics it
// cycles over (message `seq` of publisher p goes to topics[pubs[p][seq % pubs[p].length]]), and
// for each subscriber one filter. From the number of messages each publisher sent, the number
// each subscriber must have received from each publisher follows exactly.

export const LATENCY_RATE = 1000; // msg/s
/**
 * The latency flow runs this long before its measured window (steady state). A freshly started
 * svc answers its first 1,000 msg/s with a heavier tail while V8 optimizes the publish path, which
 * at this rate takes about 13 s (samples over 0.15 ms, counted per second: 106-171 in the first,
 * 6-25 a second up to the 13th, then 0-9, mostly under 5: Mosquitto's 0-6 a second after its
 * first). The first seconds are reported too ("cold").
 */
export const LATENCY_WARMUP_MS = 15_000;
/** The cold window starts this long after the flow does (the connections' own set-up). */
export const LATENCY_COLD_SKIP_MS = 500;
export const CONN_COUNT = 10_000;

/**
 * The flow shapes the cluster scenario can take (`--cluster-shape`). Default: pairs, the shape that
 * keeps a single svc node busiest (one core saturated, the load generators mostly idle: broker-bound),
 * where fan-in leaves it partly idle behind its one subscriber connection. Both forward every
 * message across the link exactly once (one subscriber per topic).
 */
export const CLUSTER_SHAPES = ["pairs", "fan-in"];

/** Every scenario, in run order. `qos: null` marks scenarios where QoS does not apply. */
export function allScenarios({ full, memoryCounts = [], clusterShape = "pairs" }) {
  const out = [];
  const flows = [
    ["fan-in", [64, 16384]],
    ["fan-out", [64]],
    ["pairs", [64]],
    ["wildcard", [64]],
  ];
  for (const [key, payloads] of flows) {
    for (const payload of payloads) {
      for (const qos of [0, 1, 2]) out.push({ key, kind: "flow", qos, payload });
    }
  }
  for (const qos of [0, 1, 2]) out.push({ key: "latency", kind: "latency", qos, payload: 64, rate: LATENCY_RATE });
  out.push({ key: "conn-rate", kind: "conn", qos: null, payload: null, count: CONN_COUNT });
  const counts = memoryCounts.length > 0 ? memoryCounts : [10_000];
  if (full && !counts.includes(100_000)) counts.push(100_000);
  for (const count of counts) out.push({ key: "memory", kind: "memory", qos: null, payload: null, count });
  // Cross-node forwarding: the `shape` flow with its publishers on node 1 and its subscribers on
  // node 2 of a 2-node cluster, against the same flow on one node in the same run.
  for (const qos of [0, 1]) out.push({ key: "cluster", kind: "cluster", qos, payload: 64, shape: clusterShape });
  return out;
}

export const SCENARIO_KEYS = ["fan-in", "fan-out", "pairs", "wildcard", "latency", "conn-rate", "memory", "cluster"];

/** Human-readable description of a scenario row (without QoS). */
export function describe(s) {
  switch (s.key) {
    case "fan-in":
      return `fan-in 10 pub -> 1 sub, ${sizeLabel(s.payload)}`;
    case "fan-out":
      return `fan-out 1 pub -> 10 sub, ${sizeLabel(s.payload)}`;
    case "pairs":
      return `pairs 20 pub/sub, ${sizeLabel(s.payload)}`;
    case "wildcard":
      return `wildcard 10 pub -> 100 sub (+/#), 10k topics, ${sizeLabel(s.payload)}`;
    case "latency":
      return `latency at ${s.rate.toLocaleString("en")} msg/s, ${sizeLabel(s.payload)}`;
    case "conn-rate":
      return `connection rate, ${s.count.toLocaleString("en")} connections`;
    case "memory":
      return `RSS per idle connection, ${s.count.toLocaleString("en")} connections`;
    case "cluster": {
      const shape = s.shape === "fan-in" ? "fan-in 10 pub -> 1 sub" : "pairs 20 pub/sub";
      return `cluster, 2 nodes: ${shape}, publishers on node 1, subscribers on node 2, ${sizeLabel(s.payload)}`;
    }
    default:
      return s.key;
  }
}

export function sizeLabel(n) {
  return n >= 1024 ? `${n / 1024} KB` : `${n} B`;
}

/** The plan of a flow scenario. */
export function flowPlan(key) {
  if (key === "fan-in") {
    const topics = Array.from({ length: 10 }, (_, i) => `bench/in/${i}`);
    return { topics, pubs: topics.map((_, i) => [i]), subs: ["bench/in/+"] };
  }
  if (key === "fan-out") {
    return { topics: ["bench/out"], pubs: [[0]], subs: Array.from({ length: 10 }, () => "bench/out") };
  }
  if (key === "pairs") {
    const topics = Array.from({ length: 20 }, (_, i) => `bench/pair/${i}`);
    return { topics, pubs: topics.map((_, i) => [i]), subs: [...topics] };
  }
  if (key === "wildcard") {
    // 10,000 topics bench/w/<a>/<b> (a, b in 0..99). Subscribers 0..49 hold bench/w/+/<j>
    // (a single-level wildcard in the middle: 100 topics each), subscribers 50..99 hold
    // bench/w/<j>/# (100 topics each). A topic is matched by 0, 1 or 2 subscribers (1 on
    // average), a quarter by none. Each of the 10 publishers cycles over all 10,000 topics,
    // starting 1,000 topics apart.
    const topics = [];
    for (let a = 0; a < 100; a++) for (let b = 0; b < 100; b++) topics.push(`bench/w/${a}/${b}`);
    const pubs = Array.from({ length: 10 }, (_, p) =>
      Array.from({ length: topics.length }, (_, s) => (p * 1000 + s) % topics.length),
    );
    const subs = Array.from({ length: 100 }, (_, j) => (j < 50 ? `bench/w/+/${j}` : `bench/w/${j}/#`));
    return { topics, pubs, subs };
  }
  throw new Error(`no flow plan for ${key}`);
}

/** MQTT topic filter matching (no `$` topics in the bench). */
export function topicMatches(filter, topic) {
  const f = filter.split("/");
  const t = topic.split("/");
  for (let i = 0; i < f.length; i++) {
    if (f[i] === "#") return true;
    if (i >= t.length) return false;
    if (f[i] !== "+" && f[i] !== t[i]) return false;
  }
  return f.length === t.length;
}

/**
 * expected[c][p]: messages subscriber c must have received from publisher p, given sent[p]
 * messages published by p.
 */
export function expectedMatrix(plan, sent) {
  const masks = plan.subs.map((f) => Uint8Array.from(plan.topics, (t) => (topicMatches(f, t) ? 1 : 0)));
  return masks.map((mask) =>
    plan.pubs.map((list, p) => {
      const n = sent[p] ?? 0;
      const L = list.length;
      let whole = 0;
      let part = 0;
      const r = n % L;
      for (let s = 0; s < L; s++) {
        if (mask[list[s]]) {
          whole++;
          if (s < r) part++;
        }
      }
      return Math.floor(n / L) * whole + part;
    }),
  );
}
