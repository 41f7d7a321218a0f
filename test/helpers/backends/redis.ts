// A real Redis for tests: `redis-server` from PATH on 127.0.0.1 and a free port, no persistence,
// its working dir a temp dir removed by close(). Also a one-node cluster (cluster mode, every slot
// on the node) and a sentinel watching a server. Missing binary: see describeBackend.

import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  type BackendProvider,
  type BackendServer,
  backendTempDir,
  findBinary,
  freePort,
  restartable,
  type ServerProcess,
  spawnServer,
} from "./process.ts";

export const REDIS_INSTALL_HINT = "apt-get install redis-server";

export function findRedisBinary(): string | undefined {
  return findBinary("redis-server", ["/usr/bin", "/usr/sbin"]);
}

export function findRedis(): BackendProvider {
  const bin = findRedisBinary();
  if (bin === undefined)
    return { available: false, reason: `no redis-server: install it with \`${REDIS_INSTALL_HINT}\`` };
  return { available: true, start: () => startRedis(bin) };
}

/**
 * A Redis server; `cluster`: in cluster mode (the caller assigns the slots, e.g. `CLUSTER
 * ADDSLOTSRANGE 0 16383`); `sentinelOf`: a sentinel monitoring the master on that port as
 * `mymaster`.
 */
export async function startRedis(
  bin: string,
  opts: { cluster?: boolean; sentinelOf?: number } = {},
): Promise<BackendServer> {
  const dir = backendTempDir("redis");
  const port = await freePort();
  let args = ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir];
  if (opts.cluster) {
    // Announced as 127.0.0.1 (else CLUSTER SLOTS names the node with an empty address).
    args.push("--cluster-enabled", "yes", "--cluster-config-file", join(dir, "nodes.conf"));
    args.push("--cluster-announce-ip", "127.0.0.1");
  }
  let ready = /Ready to accept connections/;
  if (opts.sentinelOf !== undefined) {
    // A sentinel rewrites its configuration file: it must be a writable file of its own.
    const conf = join(dir, "sentinel.conf");
    writeFileSync(conf, `sentinel monitor mymaster 127.0.0.1 ${opts.sentinelOf} 1\n`);
    args = [conf, "--sentinel", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir];
    ready = /\+monitor master mymaster/;
  }
  const run = () => spawnServer(bin, args, ready);
  let first: ServerProcess;
  try {
    first = await run();
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    throw err;
  }
  return restartable(port, dir, first, run, "SIGKILL");
}
