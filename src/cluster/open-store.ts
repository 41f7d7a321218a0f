// Chooses the node's cluster store from its configuration: etcd (`cluster.etcd.server`) when the
// cluster is discovered through etcd or Kubernetes (which clusters on etcd too), otherwise the
// embedded store persisted in `<node.data_dir>/store/`. The etcd client (and its gRPC stack) is
// loaded only then: a single node never loads it. Also builds the key layout every user of the
// store shares.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { rootCertificates } from "node:tls";
import type { Config } from "../config/index.ts";
import type { EtcdStoreOptions } from "./etcd-store.ts";
import { ClusterKeys } from "./keys.ts";
import { MemoryStore } from "./memory-store.ts";
import type { ClusterStore } from "./store.ts";

export interface OpenStoreOptions {
  /** Where errors nobody awaits go (a throwing watch callback...); default: a process warning. */
  onError?: (err: unknown) => void;
}

export async function openStore(config: Config, opts: OpenStoreOptions = {}): Promise<ClusterStore> {
  if (clusteredOnEtcd(config)) {
    const { EtcdStore } = await import("./etcd-store.ts");
    return new EtcdStore({
      hosts: config.get("cluster.etcd.server"),
      credentials: etcdCredentials(config),
      onError: opts.onError,
    });
  }
  return new MemoryStore({ dir: join(config.get("node.data_dir"), "store"), onError: opts.onError });
}

/**
 * TLS to etcd from `cluster.etcd.ssl.*`: the CA file (else Node's bundled CAs) and, when both are
 * set, the client key and certificate; undefined (plain gRPC) when none is set.
 */
export function etcdCredentials(config: Config): EtcdStoreOptions["credentials"] {
  const ca = config.get("cluster.etcd.ssl.cacertfile");
  const key = config.get("cluster.etcd.ssl.keyfile");
  const cert = config.get("cluster.etcd.ssl.certfile");
  if (ca === undefined && key === undefined && cert === undefined) return undefined;
  return {
    rootCertificate: ca === undefined ? Buffer.from(rootCertificates.join("\n")) : readFileSync(ca),
    privateKey: key === undefined ? undefined : readFileSync(key),
    certChain: cert === undefined ? undefined : readFileSync(cert),
  };
}

/** Discovery etcd or k8s: the node runs in an etcd-backed cluster (store, membership, link). */
export function clusteredOnEtcd(config: Config): boolean {
  const d = config.get("cluster.discovery");
  return d === "etcd" || d === "k8s";
}

export function clusterKeys(config: Config): ClusterKeys {
  return new ClusterKeys(config.get("cluster.etcd.prefix"), config.get("cluster.name"));
}
