// How discovered peers act on the etcd membership (src/cluster/peer-discovery.ts), on the
// in-process store with the same semantics as etcd and a source driven by the test: the link is
// pointed at the discovered address with the registered port; a registered node that leaves the
// view is removed at once, one never listed after a grace; nothing is removed while the view does
// not list this node itself (names and discovery disagree); a listed pod not registered is logged.

import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ClusterKeys } from "../../src/cluster/keys.ts";
import { Membership, type NodeRecord } from "../../src/cluster/membership.ts";
import { MemoryStore } from "../../src/cluster/memory-store.ts";
import {
  type DiscoveredPeer,
  DiscoveredPeers,
  type PeerSource,
  type PeerView,
} from "../../src/cluster/peer-discovery.ts";
import type { Lease } from "../../src/cluster/store.ts";
import { encodeJson } from "../../src/cluster/store-json.ts";
import type { Logger } from "../../src/telemetry/logger.ts";
import { waitUntil } from "../helpers/wait.ts";

class DrivenSource implements PeerSource {
  private cb: ((v: PeerView) => void) | null = null;
  start(onChange: (v: PeerView) => void): void {
    this.cb = onChange;
  }
  async stop(): Promise<void> {
    this.cb = null;
  }
  show(nodes: string[], synced = true): void {
    const peers = new Map<string, DiscoveredPeer>();
    nodes.forEach((node, i) => {
      peers.set(node, { node, address: `10.0.0.${i + 1}`, ready: true, terminating: false });
    });
    this.cb?.({ peers, synced });
  }
}

const logs: { level: string; msg: string }[] = [];
const at = (level: string) => (obj: object | string, msg?: string) => {
  logs.push({ level, msg: typeof obj === "string" ? obj : (msg ?? "") });
};
const logger: Logger = {
  debug: at("debug"),
  info: at("info"),
  warn: at("warn"),
  error: at("error"),
  child: () => logger,
};

describe("DiscoveredPeers", () => {
  let store: MemoryStore;
  const keys = new ClusterKeys("t", "c");
  let membership: Membership;
  let peers: DiscoveredPeers;
  let source: DrivenSource;
  const dialed: [string, string][] = [];
  const leases: Lease[] = [];

  /** Registers another node as its own process would (under its own lease). */
  const register = async (node: string, port: number): Promise<void> => {
    const lease = await store.grantLease(30_000);
    leases.push(lease);
    const rec: NodeRecord = { node, address: `${node.split("@")[1]}:${port}`, version: "t", startedAt: Date.now() };
    await store.put(keys.node(node), encodeJson(rec), { lease });
  };
  const registered = async (node: string) => (await store.get(keys.node(node))) !== undefined;

  beforeEach(async () => {
    logs.length = 0;
    dialed.length = 0;
    store = new MemoryStore();
    source = new DrivenSource();
    const self: NodeRecord = { node: "svc@a", address: "a:5369", version: "t", startedAt: Date.now() };
    membership = new Membership(
      store,
      keys,
      self,
      30_000,
      {
        up: (rec) => peers.registered(rec.node),
        down: () => {},
        reregistered: () => {},
        selfRemoved: () => peers.selfRemoved(),
      },
      logger,
    );
    peers = new DiscoveredPeers({
      source,
      self: "svc@a",
      membership,
      dial: (node, address) => dialed.push([node, address]),
      logger,
      graceMs: 300,
    });
    await membership.start();
    await peers.start();
  });

  afterEach(async () => {
    await peers.stop();
    await membership.stop();
    for (const l of leases.splice(0)) await l.revoke().catch(() => {});
    await store.close();
  });

  it("dials the discovered address with the registered port, and removes a node that left at once", async () => {
    await register("svc@b", 6001);
    await waitUntil(() => membership.isRunning("svc@b"), "b running");
    source.show(["svc@a", "svc@b"]);
    expect(dialed).toContainEqual(["svc@b", "10.0.0.2:6001"]);
    expect(peers.addressOf({ node: "svc@b", address: "b:6001" })).toBe("10.0.0.2:6001");
    source.show(["svc@a"]);
    await waitUntil(async () => !(await registered("svc@b")), "b's registration removed");
    await waitUntil(() => !membership.isRunning("svc@b"), "b down");
    expect(logs.some((l) => l.msg.includes("left the discovered set"))).toBe(true);
  });

  it("gives a node registered but never listed a grace period, then removes it", async () => {
    source.show(["svc@a"]);
    const t0 = Date.now();
    await register("svc@c", 6002);
    await waitUntil(async () => !(await registered("svc@c")), "c removed after the grace", 3000);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
  });

  it("removes nothing while the view does not list this node, nor while out of sync", async () => {
    await register("svc@b", 6001);
    await waitUntil(() => membership.isRunning("svc@b"), "b running");
    source.show(["svc@x"]);
    source.show(["svc@a"], false);
    // A check that nothing happens has no event to wait on: the time bound is the grace (250 ms)
    // plus the recheck, and the assertion is that nothing was removed by then.
    await new Promise((r) => setTimeout(r, 500));
    expect(await registered("svc@b")).toBe(true);
    expect(logs.filter((l) => l.level === "error").map((l) => l.msg)).toEqual([
      expect.stringContaining("this node's name is not among the peers discovered"),
    ]);
    expect(logs.some((l) => l.msg.includes("not registered in the cluster yet") && l.level === "info")).toBe(true);
  });

  it("writes its own registration again when another node removed it, once listed", async () => {
    source.show(["svc@b"]);
    await store.delete(keys.node("svc@a"));
    // The deletion has reached this node's membership (its watch): still not written back.
    await waitUntil(() => !membership.isRunning("svc@a"), "own registration seen gone");
    expect(await registered("svc@a")).toBe(false);
    source.show(["svc@a", "svc@b"]);
    await waitUntil(() => registered("svc@a"), "own registration back");
  });
});
