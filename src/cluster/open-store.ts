// Chooses the node's cluster store from its configuration: etcd (`cluster.etcd.server`) when the
// cluster is discovered through etcd, otherwise the embedded store persisted in
// `<node.data_dir>/store/`. Also builds the key layout every user of the store shares.

import { join } from "node:path";
import type { Config } from "../config/index.ts";
import { EtcdStore } from "./etcd-store.ts";
import { ClusterKeys } from "./keys.ts";
import { MemoryStore } from "./memory-store.ts";
import type { ClusterStore } from "./store.ts";

export interface OpenStoreOptions {
  /** Where errors nobody awaits go (a throwing watch callback...); default: a process warning. */
  onError?: (err: unknown) => void;
}

export function openStore(config: Config, opts: OpenStoreOptions = {}): ClusterStore {
  if (config.get("cluster.discovery") === "etcd") {
    return new EtcdStore({ hosts: config.get("cluster.etcd.server"), onError: opts.onError });
  }
  return new MemoryStore({ dir: join(config.get("node.data_dir"), "store"), onError: opts.onError });
}

export function clusterKeys(config: Config): ClusterKeys {
  return new ClusterKeys(config.get("cluster.etcd.prefix"), config.get("cluster.name"));
}
