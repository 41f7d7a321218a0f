// Renders bench results (the records of bench/results/latest.jsonl) as Markdown: the machine, one
// table with each figure per broker and svc's ratio to each peer, a legend and notes. Used by
// bench/run.js (terminal) and bench/readme.js (README section).

import { describe } from "./scenarios.js";

export const LEGEND = [
  "ratio: svc's advantage over the peer, measured in the same run (> 1.00x: svc better; throughput svc/peer, latency p99 and memory peer/svc).",
  "client-bound: a load-generator process used more than 90% of a core in the measured window; the figure may understate the broker.",
  "machine-bound: the broker used less than 90% of a core while broker and load generators together used more than 90% of all cores.",
  "FAILED: a QoS 1/2 message was lost, or any message duplicated, or a publish left unacknowledged, or a connection refused; such a run gives no figure.",
  "Deliveries/s: PUBLISH packets received by all subscribers per second of the measured window. QoS 0 losses (a broker may drop QoS 0 under overload) are in the JSON lines.",
  "latency: end-to-end, publisher to subscriber, at steady state (after the warm-up named below; the ratio compares these p99s); in brackets, cold: the same figures over the first seconds of the flow on the freshly started broker; then the broker's CPU time per message in the measured window.",
  "connection rate: at steady state (the median of the measured rounds, after the warm-up rounds named below; the ratio compares these); in brackets, cold: the first round, on the freshly started broker; then the broker's CPU time per connection in the median round.",
];

export const REPEAT_LEGEND =
  "median: each scenario ran once per round for every broker, round after round, and each cell is its broker's median run by the figure (latency: by p99); a run with a loss or an error is shown instead; every run is in the JSON lines (`type: run`).";

export const UNBOUNDED_LEGEND =
  "queue unbounded: Mosquitto lost QoS 1/2 messages with its queue bounded (max_queued_messages, as svc's zone.max_mqueue_len): it holds no publisher back, so where publishers outrun a subscriber the queue overflows; the figure is from a second run with max_queued_messages 0 (no bound), and the losses of the first follow.";

export const FLOOR_LEGEND =
  "node-floor: no broker, a Node.js process that only relays MQTT frames (bench/peers/node-floor.js): the least the runtime svc runs on costs for the same work.";

export const CLUSTER_LEGEND =
  "cluster: svc only; deliveries/s of 2 nodes (publishers on node 1, subscribers on node 2, every message forwarded over the inter-node link), then its ratio to the same flow on one svc node in the same run (goal: at least 0.60x). Both nodes, etcd and the load generators share the machine's cores.";

export function machineLine(m) {
  const peers = [
    `svc ${m.versions.svc}`,
    m.versions.aedes ? `Aedes ${m.versions.aedes}` : null,
    m.versions.mosquitto ? `Mosquitto ${m.versions.mosquitto}` : null,
  ].filter(Boolean);
  return (
    `${m.cpu}, ${m.cores} cores, ${m.memory_gib} GiB, ${m.os} ${m.kernel}, node ${m.node}; ${peers.join(", ")}; ` +
    `${m.duration_s} s per scenario${m.repeat > 1 ? `, the median of ${m.repeat} runs alternating the brokers` : ""}, ` +
    `MQTT 3.1.1 over loopback, ${m.date}`
  );
}

function rowKey(r) {
  return `${r.scenario}|${r.qos}|${r.payload}|${r.count ?? ""}`;
}

function metricLabel(r) {
  switch (r.kind) {
    case "flow":
      return "deliveries/s";
    case "latency":
      return "latency ms p50 / p99 / p99.9";
    case "conn":
      return "CONNACKs/s";
    case "cluster":
      return "deliveries/s, 2 nodes (ratio to 1 node)";
    case "memory":
      return "RSS per connection";
    default:
      return r.metric;
  }
}

/** Milliseconds with two decimals, "-" when there is no figure. */
const ms = (x) => (x == null ? "-" : x.toFixed(2));

/** "; N µs CPU/<what>": the broker's CPU per event, when the record has it. */
const perEvent = (us, what) => (us == null ? "" : `; ${Math.round(us)} µs CPU/${what}`);

function fmtValue(r) {
  if (r.kind === "latency") {
    const steady = [r.p50, r.p99, r.p999].map(ms).join(" / ");
    const cold = r.cold_p99 === undefined ? "" : ` (cold ${[r.cold_p50, r.cold_p99, r.cold_p999].map(ms).join(" / ")})`;
    return `${steady}${cold}${perEvent(r.broker_us_per_msg, "msg")}`;
  }
  if (r.kind === "conn" && r.cold_value !== undefined) {
    return `${Math.round(r.value).toLocaleString("en")} (cold ${Math.round(r.cold_value).toLocaleString("en")})${perEvent(r.broker_us_per_conn, "conn")}`;
  }
  if (r.kind === "memory") return `${(r.value / 1024).toFixed(1)} KB (RSS ${Math.round(r.rss_after / 2 ** 20)} MB)`;
  if (r.kind === "cluster" && r.single_node?.value > 0) {
    const x = r.value / r.single_node.value;
    return `${Math.round(r.value).toLocaleString("en")} (${x.toFixed(2)}x of 1 node: ${Math.round(r.single_node.value).toLocaleString("en")})`;
  }
  return Math.round(r.value).toLocaleString("en");
}

export function cell(r) {
  if (!r) return "";
  if (r.status === "failed") {
    const parts = [];
    if (r.lost) parts.push(`lost ${r.lost.toLocaleString("en")}`);
    if (r.dups) parts.push(`dup ${r.dups.toLocaleString("en")}`);
    if (r.unexpected) parts.push(`unexpected ${r.unexpected.toLocaleString("en")}`);
    if (r.unacked) parts.push(`unacked ${r.unacked.toLocaleString("en")}`);
    if (r.errors) parts.push(`refused/failed connections ${r.errors.toLocaleString("en")}`);
    return `FAILED (${parts.join(", ") || "see notes"})`;
  }
  if (r.status === "error") return "error (see notes)";
  if (r.status === "skipped") return "skipped (see notes)";
  const flags = [
    r.mosquitto_queue === "unbounded"
      ? `queue unbounded; bounded, it lost ${(r.bounded_run?.lost ?? 0).toLocaleString("en")}`
      : null,
    r.client_bound ? "client-bound" : null,
    r.machine_bound ? "machine-bound" : null,
  ].filter(Boolean);
  return flags.length ? `${fmtValue(r)} (${flags.join(", ")})` : fmtValue(r);
}

export function ratio(svc, peer) {
  if (!svc || !peer || svc.status !== "ok" || peer.status !== "ok") return "";
  if (!(svc.value > 0) || !(peer.value > 0)) return "";
  const x = svc.better === "lower" ? peer.value / svc.value : svc.value / peer.value;
  return `${x.toFixed(2)}x`;
}

/** Markdown for a list of records (one `type: "machine"` record, then `type: "result"` ones). */
export function renderReport(records) {
  const machine = records.find((r) => r.type === "machine");
  const results = records.filter((r) => r.type === "result");
  const peers = machine?.peers ?? [...new Set(results.map((r) => r.broker))];
  const others = peers.includes("svc") ? peers.filter((p) => p !== "svc") : [];
  const rows = new Map();
  for (const r of results) {
    const k = rowKey(r);
    if (!rows.has(k)) rows.set(k, { first: r, by: {} });
    rows.get(k).by[r.broker] = r;
  }
  const lines = [];
  if (machine) lines.push(`Machine: ${machineLine(machine)}.`, "");
  const caveats = [];
  if (machine && machine.duration_s < 5) caveats.push(`${machine.duration_s} s per scenario`);
  for (const a of ["--only", "--qos", "--peers"]) {
    if (machine?.args?.includes(a)) caveats.push(`${a} ${machine.args[machine.args.indexOf(a) + 1]}`);
  }
  if (caveats.length) lines.push(`**Partial or short run (${caveats.join(", ")}): not representative.**`, "");
  const head = ["scenario", "QoS", "figure", ...peers, ...others.map((p) => `svc vs ${p}`)];
  lines.push(`| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`);
  const notes = [];
  for (const { first, by } of rows.values()) {
    const label = describe({
      key: first.scenario,
      payload: first.payload,
      rate: first.rate,
      count: first.count,
      shape: first.shape,
    });
    const cols = [
      label,
      first.qos ?? "-",
      metricLabel(first),
      ...peers.map((p) => cell(by[p])),
      ...others.map((p) => ratio(by.svc, by[p])),
    ];
    lines.push(`| ${cols.join(" | ")} |`);
    for (const p of peers) {
      const r = by[p];
      if (r && r.status !== "ok" && r.note)
        notes.push(`${label}${first.qos == null ? "" : `, QoS ${first.qos}`}, ${p}: ${r.note}`);
    }
  }
  lines.push("", ...LEGEND.filter((l) => others.length > 0 || !l.startsWith("ratio")).map((l) => `- ${l}`));
  if (machine?.repeat > 1) lines.push(`- ${REPEAT_LEGEND}`);
  if (results.some((r) => r.mosquitto_queue === "unbounded")) lines.push(`- ${UNBOUNDED_LEGEND}`);
  if (peers.includes("node-floor")) lines.push(`- ${FLOOR_LEGEND}`);
  if (results.some((r) => r.kind === "cluster")) lines.push(`- ${CLUSTER_LEGEND}`);
  if (machine?.settings) lines.push("", ...machine.settings.map((l) => `- ${l}`));
  if (notes.length) lines.push("", "Notes:", ...notes.map((n) => `- ${n}`));
  return lines.join("\n");
}
