// Joining a cluster by asking one of its nodes (`cluster join <node>`, `cluster.discovery =
// static`): a short-lived link to the peer proves the shared cookie (a node with another cookie is
// told `cookie_mismatch`) and fetches the cluster's store settings; they are kept in
// `<data_dir>/cluster.json`, and the node runs in that cluster from its next start on (the family
// restarts the node's applications on a join too). `cluster leave` removes the file.

import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Config } from "../config/index.ts";
import type { Logger } from "../telemetry/logger.ts";
import { LinkError } from "./link/errors.ts";
import { NodeLink } from "./link/node-link.ts";

/** What a node needs to run in a cluster: its store and key layout. */
export interface ClusterSettings {
  servers: string[];
  prefix: string;
  name: string;
}

export class ClusterJoinFailure extends Error {
  override name = "ClusterJoinFailure";
}

const FILE = "cluster.json";

export function readJoined(dataDir: string): ClusterSettings | undefined {
  const f = join(dataDir, FILE);
  if (!existsSync(f)) return undefined;
  const s = JSON.parse(readFileSync(f, "utf8")) as ClusterSettings;
  if (!Array.isArray(s.servers) || typeof s.prefix !== "string" || typeof s.name !== "string") {
    throw new ClusterJoinFailure(`${f}: not a cluster settings file`);
  }
  return s;
}

export function writeJoined(dataDir: string, s: ClusterSettings): void {
  const f = join(dataDir, FILE);
  writeFileSync(`${f}.tmp`, `${JSON.stringify(s, null, 2)}\n`);
  renameSync(`${f}.tmp`, f);
}

export function forgetJoined(dataDir: string): boolean {
  const f = join(dataDir, FILE);
  if (!existsSync(f)) return false;
  rmSync(f);
  return true;
}

/** `name@host[:port]` -> the node name and its link address (port defaults to `defaultPort`). */
export function seedAddress(seed: string, defaultPort: number): { node: string; address: string } {
  const m = /^(.+@)([^:@]+)(?::(\d+))?$/.exec(seed.trim());
  if (m === null) throw new ClusterJoinFailure(`not a node name: ${seed}`);
  const node = `${m[1]}${m[2]}`;
  return { node, address: `${m[2]}:${m[3] ?? String(defaultPort)}` };
}

/** Asks `peer` (at `address`) for its cluster's settings over an authenticated link. */
export async function fetchClusterSettings(o: {
  nodeName: string;
  cookie: string;
  peer: string;
  address: string;
  logger: Logger;
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer };
}): Promise<ClusterSettings> {
  const link = new NodeLink({
    nodeName: o.nodeName,
    cookie: o.cookie,
    bind: { host: "127.0.0.1", port: 0 },
    tls: o.tls,
    logger: o.logger,
    onForward: () => {},
    onCall: async () => {
      throw new Error("not clustered");
    },
  });
  await link.start();
  try {
    link.addPeer(o.peer, o.address);
    return (await link.call(o.peer, "cluster.settings", null, 5000)) as ClusterSettings;
  } catch (err) {
    if (err instanceof LinkError && err.code === "cookie_mismatch") {
      throw new ClusterJoinFailure(`cannot join ${o.peer}: node.cookie differs from the cluster's`);
    }
    throw new ClusterJoinFailure(`cannot join ${o.peer} at ${o.address}: ${(err as Error).message}`);
  } finally {
    await link.stop();
  }
}

/**
 * The configuration a node runs with: with `cluster.discovery = manual` or `static` and a joined
 * cluster on record, that cluster's etcd settings (discovery etcd). A `static` node with none on
 * record asks its seeds first; when no other seed answers it forms the cluster from its own
 * `cluster.etcd.*` settings.
 */
export async function resolveClusterConfig(
  config: Config,
  logger: Logger,
  tls?: { key: Buffer; cert: Buffer; ca?: Buffer },
): Promise<Config> {
  const discovery = config.get("cluster.discovery");
  if (discovery !== "manual" && discovery !== "static") return config;
  const dataDir = config.get("node.data_dir");
  let s = readJoined(dataDir);
  if (s === undefined && discovery === "static") {
    const self = config.get("node.name");
    for (const seed of config.get("cluster.static.seeds")) {
      const { node, address } = seedAddress(seed, config.get("rpc.tcp_server_port"));
      if (node === self) continue;
      try {
        s = await fetchClusterSettings({
          nodeName: self,
          cookie: config.get("node.cookie"),
          peer: node,
          address,
          logger,
          tls,
        });
        writeJoined(dataDir, s);
        logger.info({ seed: node }, "joined the cluster of a seed");
        break;
      } catch (err) {
        logger.warn({ seed: node, err: (err as Error).message }, "seed did not answer");
      }
    }
    if (s === undefined) return config.with({ "cluster.discovery": "etcd" });
  }
  if (s === undefined) return config;
  return config.with({
    "cluster.discovery": "etcd",
    "cluster.etcd.server": s.servers.join(","),
    "cluster.etcd.prefix": s.prefix,
    "cluster.name": s.name,
  });
}
