// The cluster scenario's machinery: a real etcd (the `etcd` binary from PATH, on free loopback ports,
// fast raft timers, data dir on /dev/shm; the logic of test/helpers/etcd.ts in plain JS), two svc
// nodes clustered on it, and a probe that waits until node 1 forwards to node 2 on every filter of
// the scenario (membership, inter-node link and routes all in place) before the measurement starts.
// Every child is tracked by procs.js (killed on exit) and the etcd data dir is a tracked temp dir.

import { spawn } from "node:child_process";
import { accessSync, constants, existsSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import { delimiter, join } from "node:path";
import { startBroker } from "./peers/brokers.js";
import { removeDir, stopChild, tempDir, track } from "./procs.js";
import { connectRaw, publishTemplate, Tracker } from "./raw-client.js";
import { topicMatches } from "./scenarios.js";

export const ETCD_INSTALL_HINT = "apt-get install etcd-server";

/** Node names of the two cluster nodes (node 1: publishers, node 2: subscribers). */
export const NODE_NAMES = ["n1@127.0.0.1", "n2@127.0.0.1"];

/** The svc settings of a cluster node, besides those every bench svc gets (brokers.js). */
export function clusterSettings(endpoint, prefix, nodeName) {
  return {
    "node.name": nodeName,
    "cluster.discovery": "etcd",
    "cluster.etcd.server": endpoint,
    "cluster.etcd.prefix": prefix,
    "cluster.etcd.node_ttl": "15s",
    "rpc.tcp_server_port": "0",
  };
}

export function etcdPath() {
  for (const d of (process.env.PATH ?? "").split(delimiter)) {
    if (!d) continue;
    const p = join(d, "etcd");
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {}
  }
  return null;
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

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

function etcdArgs(dataDir, clientPort, peerPort) {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    ...["--name", "bench1", "--data-dir", dataDir],
    ...["--listen-client-urls", client, "--advertise-client-urls", client],
    ...["--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", `bench1=${peer}`],
    ...["--heartbeat-interval", "10", "--election-timeout", "50", "--log-level", "error"],
  ];
}

/** Spawns etcd and resolves once `/health` says true; rejects with its stderr if it exits. */
async function spawnHealthy(bin, args, clientPort) {
  const child = track(spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] }));
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr = (stderr + d).slice(-4000);
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
  });
  const deadline = Date.now() + 15000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`etcd exited at start: ${stderr.trim()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${clientPort}/health`, { signal: AbortSignal.timeout(500) });
      const body = await res.json();
      if (body.health === "true") return child;
    } catch {}
    await sleep(20);
  }
  await stopChild(child, 3000);
  throw new Error(`etcd not healthy within 15 s: ${stderr.trim()}`);
}

/**
 * Starts etcd on free loopback ports (retrying when a port was taken in between), data on
 * /dev/shm. Resolves with `{ endpoint, pid, stop }`; stop() kills it and removes its data.
 */
export async function startEtcd() {
  const bin = etcdPath();
  if (!bin) throw new Error(`etcd is not on PATH (${ETCD_INSTALL_HINT})`);
  const dataDir = tempDir("svc-bench-etcd-", existsSync("/dev/shm") ? "/dev/shm" : os.tmpdir());
  let lastErr;
  for (let attempt = 0; attempt < 5; attempt++) {
    const clientPort = await freePort();
    const peerPort = await freePort();
    if (clientPort === peerPort) continue;
    try {
      const child = await spawnHealthy(bin, etcdArgs(dataDir, clientPort, peerPort), clientPort);
      return {
        endpoint: `http://127.0.0.1:${clientPort}`,
        pid: child.pid,
        async stop() {
          await stopChild(child, 3000);
          removeDir(dataDir);
        },
      };
    } catch (err) {
      lastErr = err;
      if (!/address already in use/.test(String(err))) break;
    }
  }
  removeDir(dataDir);
  throw lastErr;
}

/**
 * Starts etcd and two svc nodes clustered on it (fresh data dirs, unique key prefix). Resolves with
 * `{ etcd, nodes: [n1, n2], stop }`; on a failure everything started so far is stopped. `onStop`
 * receives the stop function at once, so that a caller can stop a start still in progress.
 */
export async function startCluster({ profDir = "", onStop = null } = {}) {
  const started = { etcd: null, nodes: [], dirs: [] };
  const stop = async () => {
    const { etcd, nodes, dirs } = started;
    started.etcd = null;
    started.nodes = [];
    started.dirs = [];
    for (const n of nodes) await n.stop();
    for (const d of dirs) removeDir(d);
    if (etcd) await etcd.stop();
  };
  onStop?.(stop);
  try {
    started.etcd = await startEtcd();
    const prefix = `svcbench${process.pid}x${Date.now()}`;
    for (const name of NODE_NAMES) {
      const dir = tempDir(`svc-bench-${name.split("@")[0]}-`);
      started.dirs.push(dir);
      started.nodes.push(
        await startBroker("svc", { dir, profDir, settings: clusterSettings(started.etcd.endpoint, prefix, name) }),
      );
    }
    return { etcd: started.etcd, nodes: started.nodes, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/**
 * Waits until every filter of `plan` is routed from node 1 (`pubPort`) to node 2 (`subPort`): a
 * probe client on node 2 subscribes to every filter, a probe publisher on node 1 sends one QoS 0
 * message per filter (to a plan topic it matches) every 100 ms until each has arrived. Resolves
 * with the probe subscriber, to be closed once the scenario's subscribers hold the same filters (so
 * that the routes never go away in between); rejects after `timeoutMs`.
 */
export async function awaitRoutes({ plan, pubPort, subPort, timeoutMs = 30000 }) {
  const filters = [...new Set(plan.subs)];
  const topics = filters.map((f) => {
    const t = plan.topics.find((x) => topicMatches(f, x));
    if (t === undefined) throw new Error(`no topic of the plan matches ${f}`);
    return t;
  });
  const sub = await connectRaw({ host: "127.0.0.1", port: subPort, clientId: "bench-probe-sub" });
  let pub = null;
  try {
    sub.tracker = new Tracker(filters.length);
    for (const f of filters) await sub.subscribe(f, 0);
    pub = await connectRaw({ host: "127.0.0.1", port: pubPort, clientId: "bench-probe-pub" });
    const tpls = topics.map((t, k) => publishTemplate(t, 0, 64, k).buf);
    const t0 = Date.now();
    for (;;) {
      const missing = filters.map((_, k) => k).filter((k) => sub.tracker.uniq[k] === 0 && sub.tracker.dups[k] === 0);
      if (missing.length === 0) break;
      if (Date.now() - t0 > timeoutMs) {
        throw new Error(
          `node 1 did not forward to node 2 within ${timeoutMs / 1000} s on ${missing.length} of ${filters.length} filter(s), first ${filters[missing[0]]} (membership, inter-node link or route sync not ready)`,
        );
      }
      // Each probe message of filter k carries sequence 0 again: the tracker counts repeats as dups.
      for (const k of missing) pub.sock.write(tpls[k]);
      await sleep(100);
    }
    // Let probe messages still on their way arrive here, not at the scenario's subscribers.
    await sleep(300);
    return sub;
  } catch (err) {
    sub.close();
    throw err;
  } finally {
    pub?.close();
  }
}
