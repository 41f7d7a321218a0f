// openStore: the embedded store in the data dir unless the cluster is discovered through etcd.

import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { EtcdStore } from "../../src/cluster/etcd-store.ts";
import { MemoryStore } from "../../src/cluster/memory-store.ts";
import { clusterKeys, openStore } from "../../src/cluster/open-store.ts";
import { loadConfig } from "../../src/config/index.ts";

describe("openStore", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), "svc-open-store-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("opens the embedded store in <data_dir>/store by default", async () => {
    const config = loadConfig({ overrides: { "node.data_dir": dir } });
    const store = await openStore(config);
    expect(store).toBeInstanceOf(MemoryStore);
    expect(existsSync(join(dir, "store", "store.log"))).toBe(true);
    await store.close();
  });

  it("uses etcd when discovery is etcd (no connection until the first call)", async () => {
    const config = loadConfig({
      overrides: { "node.data_dir": dir, "cluster.discovery": "etcd", "cluster.etcd.server": "http://127.0.0.1:2379" },
    });
    const store = await openStore(config);
    expect(store).toBeInstanceOf(EtcdStore);
    await store.close();
  });

  it("uses etcd when discovery is k8s (Kubernetes clusters on etcd too)", async () => {
    const config = loadConfig({
      overrides: { "node.data_dir": dir, "cluster.discovery": "k8s", "cluster.etcd.server": "http://127.0.0.1:2379" },
    });
    const store = await openStore(config);
    expect(store).toBeInstanceOf(EtcdStore);
    expect(existsSync(join(dir, "store"))).toBe(false);
    await store.close();
  });

  it("builds the key layout from cluster.etcd.prefix and cluster.name", () => {
    const config = loadConfig({ overrides: { "cluster.etcd.prefix": "corp", "cluster.name": "eu1" } });
    expect(clusterKeys(config).rules()).toBe("corp/eu1/rules/");
  });
});
