// A real etcd for tests. Order of preference: a container through testcontainers (only when the
// package is installed and a Docker engine answers), else the `etcd` binary from PATH started on
// 127.0.0.1 with free ports, fast raft timers and a data dir on /dev/shm (removed afterwards).
// With neither, describeEtcd() prints one loud line naming what to install and skips the suite,
// except under CI (`process.env.CI`), where the missing etcd is a failing test.

import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describeBackend, findBinary } from "./backends/process.ts";

export const ETCD_INSTALL_HINT = "apt-get install etcd-server";

export interface EtcdServer {
  /** Client URL, `http://127.0.0.1:<port>`. */
  readonly endpoint: string;
  readonly kind: "binary" | "container";
  /** Stops etcd keeping its data and ports (binary only: a container cannot keep its port). */
  stop(): Promise<void>;
  /** Starts a stopped etcd again on the same port with the same data. */
  start(): Promise<void>;
  /** Stops etcd and removes its data. */
  close(): Promise<void>;
}

/** The settings of node `<name>@127.0.0.1` joining the cluster on `etcd` under `prefix` (lease 2 s, inter-node link on a free port). */
export function clusterMember(name: string, etcd: EtcdServer, prefix: string): Record<string, string> {
  return {
    "node.name": `${name}@127.0.0.1`,
    "cluster.discovery": "etcd",
    "cluster.etcd.server": etcd.endpoint,
    "cluster.etcd.prefix": prefix,
    "cluster.etcd.node_ttl": "2s",
    "rpc.tcp_server_port": "0",
  };
}

export type EtcdProvider =
  | { available: true; description: string; start(): Promise<EtcdServer> }
  | { available: false; reason: string };

/** Finds a way to run etcd: testcontainers with a Docker engine, else the binary on PATH. */
export async function findEtcd(): Promise<EtcdProvider> {
  const container = await containerProvider();
  if (container !== undefined) return container;
  const bin = findEtcdBinary();
  if (bin !== undefined) return { available: true, description: `${bin} (spawned)`, start: () => startEtcdBinary(bin) };
  return {
    available: false,
    reason: `no etcd binary on PATH and no Docker engine for testcontainers: install it with \`${ETCD_INSTALL_HINT}\``,
  };
}

/**
 * `describe(name, body)` when etcd can run; otherwise one loud line and a skipped suite, or under
 * CI a suite whose single test fails (CI must run the etcd tests).
 */
export function describeEtcd(
  name: string,
  provider: EtcdProvider,
  body: (etcd: Extract<EtcdProvider, { available: true }>) => void,
): void {
  describeBackend(name, provider, body);
}

export function findEtcdBinary(): string | undefined {
  return findBinary("etcd");
}

// ---- the binary -----------------------------------------------------------------------------------

const running = new Set<ChildProcess>();
// A test process that dies must not leave etcd behind.
process.on("exit", () => {
  for (const child of running) child.kill("SIGKILL");
});

/** Starts etcd from `bin` on free loopback ports; retries with other ports if one was taken. */
export async function startEtcdBinary(bin: string): Promise<EtcdServer> {
  const dataDir = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "svc-etcd-"));
  let lastErr: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const clientPort = await freePort();
    const peerPort = await freePort();
    if (clientPort === peerPort) continue;
    const args = etcdArgs(dataDir, clientPort, peerPort);
    try {
      let child = await spawnHealthy(bin, args, clientPort);
      const endpoint = `http://127.0.0.1:${clientPort}`;
      let stopped = false;
      return {
        endpoint,
        kind: "binary",
        async stop() {
          if (stopped) return;
          stopped = true;
          await kill(child);
        },
        async start() {
          if (!stopped) return;
          child = await spawnHealthy(bin, args, clientPort);
          stopped = false;
        },
        async close() {
          if (!stopped) await kill(child);
          stopped = true;
          rmSync(dataDir, { recursive: true, force: true });
        },
      };
    } catch (err) {
      lastErr = err;
      if (!/address already in use/.test(String(err))) break;
    }
  }
  rmSync(dataDir, { recursive: true, force: true });
  throw lastErr;
}

function etcdArgs(dataDir: string, clientPort: number, peerPort: number): string[] {
  const client = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  return [
    ...["--name", "t1", "--data-dir", dataDir],
    ...["--listen-client-urls", client, "--advertise-client-urls", client],
    ...["--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer, "--initial-cluster", `t1=${peer}`],
    ...["--heartbeat-interval", "10", "--election-timeout", "50", "--log-level", "error"],
  ];
}

/** Spawns etcd and resolves once `/health` says true; rejects with its stderr if it exits. */
async function spawnHealthy(bin: string, args: string[], clientPort: number): Promise<ChildProcess> {
  const child = spawn(bin, args, { stdio: ["ignore", "ignore", "pipe"] });
  running.add(child);
  let stderr = "";
  child.stderr?.on("data", (d: Buffer) => {
    stderr = (stderr + d.toString()).slice(-4000);
  });
  let exited = false;
  child.once("exit", () => {
    exited = true;
    running.delete(child);
  });
  const deadline = Date.now() + 15_000;
  while (Date.now() < deadline) {
    if (exited) throw new Error(`etcd exited at start: ${stderr.trim()}`);
    try {
      const res = await fetch(`http://127.0.0.1:${clientPort}/health`, { signal: AbortSignal.timeout(500) });
      const body = (await res.json()) as { health?: string };
      if (body.health === "true") return child;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  await kill(child);
  throw new Error(`etcd not healthy within 15 s: ${stderr.trim()}`);
}

async function kill(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), 3000);
  await exited;
  clearTimeout(timer);
}

/** A port that was free a moment ago (bound on port 0, then closed). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr !== null ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

// ---- testcontainers ------------------------------------------------------------------------------

const ETCD_IMAGE = "gcr.io/etcd-development/etcd:v3.5.17";

/** The part of the testcontainers API used here (the package is optional, hence no static types). */
interface StartedContainer {
  getHost(): string;
  getMappedPort(port: number): number;
  stop(): Promise<unknown>;
}
interface ContainerBuilder {
  withCommand(cmd: string[]): ContainerBuilder;
  withExposedPorts(...ports: number[]): ContainerBuilder;
  withWaitStrategy(w: unknown): ContainerBuilder;
  start(): Promise<StartedContainer>;
}
interface Testcontainers {
  GenericContainer: new (image: string) => ContainerBuilder;
  Wait: { forHttp(path: string, port: number): unknown };
  getContainerRuntimeClient?: () => Promise<unknown>;
}

async function containerProvider(): Promise<EtcdProvider | undefined> {
  let tc: Testcontainers;
  try {
    const name = "testcontainers"; // a variable: the package is optional and has no types here
    tc = (await import(name)) as Testcontainers;
  } catch {
    return undefined;
  }
  try {
    // Without an engine this fails within milliseconds ("Could not find a working container
    // runtime strategy"): fall back to the binary.
    if (tc.getContainerRuntimeClient === undefined) return undefined;
    await tc.getContainerRuntimeClient();
  } catch {
    return undefined;
  }
  return { available: true, description: `${ETCD_IMAGE} (testcontainers)`, start: () => startContainer(tc) };
}

async function startContainer(tc: Testcontainers): Promise<EtcdServer> {
  const container = await new tc.GenericContainer(ETCD_IMAGE)
    .withCommand([
      "etcd",
      ...["--name", "t1", "--data-dir", "/tmp/etcd"],
      ...["--listen-client-urls", "http://0.0.0.0:2379", "--advertise-client-urls", "http://127.0.0.1:2379"],
      ...["--heartbeat-interval", "10", "--election-timeout", "50", "--log-level", "error"],
    ])
    .withExposedPorts(2379)
    .withWaitStrategy(tc.Wait.forHttp("/health", 2379))
    .start();
  const endpoint = `http://${container.getHost()}:${container.getMappedPort(2379)}`;
  const unsupported = async (): Promise<never> => {
    throw new Error("stop/start needs the etcd binary: a restarted container gets another port");
  };
  return {
    endpoint,
    kind: "container",
    stop: unsupported,
    start: unsupported,
    async close() {
      await container.stop();
    },
  };
}
