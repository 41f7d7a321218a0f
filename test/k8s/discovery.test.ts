// Kubernetes discovery (src/k8s/) against an HTTP server in the test that answers the EndpointSlice
// list and watch calls as the API server does (test/k8s/fake-apiserver.ts: no real Kubernetes API
// server can run on this machine). The client is the real @kubernetes/client-node, pointed at it
// through cluster.k8s.apiserver's code path (kubeConfigFor).

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { PeerView } from "../../src/cluster/peer-discovery.ts";
import { K8S_ALARM, K8sDiscovery, kubeConfigFor } from "../../src/k8s/discovery.ts";
import { nodeNameOf, resolveNamespace } from "../../src/k8s/node-names.ts";
import type { Logger } from "../../src/telemetry/logger.ts";
import { freePort } from "../helpers/etcd.ts";
import { waitUntil } from "../helpers/wait.ts";
import { FakeApiServer } from "./fake-apiserver.ts";

interface Line {
  level: string;
  msg: string;
}

function captureLogger(): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const at =
    (level: string) =>
    (obj: object | string, msg?: string): void => {
      lines.push({ level, msg: typeof obj === "string" ? obj : (msg ?? "") });
    };
  const logger: Logger = {
    debug: at("debug"),
    info: at("info"),
    warn: at("warn"),
    error: at("error"),
    child: () => logger,
  };
  return { logger, lines };
}

class Alarms {
  readonly active = new Map<string, string>();
  activate(name: string, desc: string): boolean {
    const fresh = !this.active.has(name);
    this.active.set(name, desc);
    return fresh;
  }
  deactivate(name: string): boolean {
    return this.active.delete(name);
  }
}

const NS = "brokers";
const SVC = "svc-headless";

describe("node names from EndpointSlice addresses (emqx-facts §6.3)", () => {
  const base = { appName: "svc", serviceName: SVC, namespace: NS, suffix: "svc.cluster.local" };
  const ep = { address: "10.1.2.3", hostname: "svc-0" };

  it("builds hostname, ip and dns forms", () => {
    expect(nodeNameOf(ep, { ...base, addressType: "hostname" })).toBe(
      "svc@svc-0.svc-headless.brokers.svc.cluster.local",
    );
    expect(nodeNameOf(ep, { ...base, addressType: "ip" })).toBe("svc@10.1.2.3");
    expect(nodeNameOf(ep, { ...base, addressType: "dns" })).toBe("svc@10-1-2-3.brokers.svc.cluster.local");
    expect(nodeNameOf(ep, { ...base, suffix: "", addressType: "hostname" })).toBe("svc@svc-0.svc-headless.brokers");
  });

  it("falls back to the pod name without a hostname, and gives up without either", () => {
    const s = { ...base, addressType: "hostname" as const };
    expect(nodeNameOf({ address: "10.0.0.9", podName: "p-1" }, s)).toBe(
      "svc@p-1.svc-headless.brokers.svc.cluster.local",
    );
    expect(nodeNameOf({ address: "10.0.0.9" }, s)).toBeNull();
  });

  it("takes the namespace from the setting, the service-account file, POD_NAMESPACE, else default", () => {
    const dir = mkdtempSync(join(tmpdir(), "svc-ns-"));
    try {
      const file = join(dir, "namespace");
      expect(resolveNamespace("given", { POD_NAMESPACE: "env" }, file)).toBe("given");
      expect(resolveNamespace("", { POD_NAMESPACE: "env" }, file)).toBe("env");
      expect(resolveNamespace("", {}, file)).toBe("default");
      writeFileSync(file, "from-file\n");
      expect(resolveNamespace("", { POD_NAMESPACE: "env" }, file)).toBe("from-file");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("K8sDiscovery against a fake API server", () => {
  let api: FakeApiServer;
  let saDir: string;
  const started: K8sDiscovery[] = [];

  beforeEach(async () => {
    api = new FakeApiServer();
    await api.start();
    saDir = mkdtempSync(join(tmpdir(), "svc-sa-"));
  });

  afterEach(async () => {
    for (const d of started.splice(0)) await d.stop();
    await api.stop();
    rmSync(saDir, { recursive: true, force: true });
  });

  const discover = (logger: Logger, server = api.url): { d: K8sDiscovery; views: PeerView[] } => {
    const d = new K8sDiscovery({
      apiserver: server,
      serviceName: SVC,
      namespace: NS,
      addressType: "hostname",
      appName: "svc",
      suffix: "svc.cluster.local",
      logger,
      serviceAccountDir: saDir,
      backoffMinMs: 20,
      backoffMaxMs: 100,
    });
    const views: PeerView[] = [];
    d.start((v) => views.push(v));
    started.push(d);
    return { d, views };
  };
  const names = (d: K8sDiscovery) => [...d.current().peers.keys()].sort();
  const node = (pod: string) => `svc@${pod}.${SVC}.${NS}.svc.cluster.local`;

  it("lists the slices of the Service (not-ready pods included) with the label selector and the token", async () => {
    writeFileSync(join(saDir, "token"), "sa-token-1");
    api.setSlice(NS, SVC, "s-a", [
      { name: "svc-0", ip: "10.0.0.1" },
      { name: "svc-1", ip: "10.0.0.2", ready: false },
    ]);
    api.setSlice(NS, "other", "o-a", [{ name: "x-0", ip: "10.9.0.1" }]);
    api.setSlice("elsewhere", SVC, "e-a", [{ name: "y-0", ip: "10.8.0.1" }]);
    const { d } = discover(captureLogger().logger);
    await waitUntil(() => d.current().synced, "synced");
    expect(names(d)).toEqual([node("svc-0"), node("svc-1")]);
    expect(d.current().peers.get(node("svc-0"))).toEqual({
      node: node("svc-0"),
      address: "10.0.0.1",
      ready: true,
      terminating: false,
    });
    expect(d.current().peers.get(node("svc-1"))?.ready).toBe(false);
    expect(api.requests[0].query.get("labelSelector")).toBe(`kubernetes.io/service-name=${SVC}`);
    expect(api.requests[0].auth).toBe("Bearer sa-token-1");
  });

  it("follows watch events: added, modified, deleted, resuming from the last resourceVersion", async () => {
    api.setSlice(NS, SVC, "s-a", [{ name: "svc-0", ip: "10.0.0.1" }]);
    const { d } = discover(captureLogger().logger);
    await waitUntil(() => d.current().synced && api.watches === 1, "watching");
    const listedAt = api.requests.find((r) => r.watch)?.query.get("resourceVersion");
    expect(listedAt).toMatch(/^\d+$/);

    api.setSlice(NS, SVC, "s-b", [{ name: "svc-1", ip: "10.0.0.2" }]);
    await waitUntil(() => d.current().peers.has(node("svc-1")), "added");
    api.setSlice(NS, SVC, "s-b", [{ name: "svc-1", ip: "10.0.0.2", ready: false, terminating: true }]);
    await waitUntil(() => d.current().peers.get(node("svc-1"))?.terminating === true, "modified");
    expect(d.current().peers.get(node("svc-1"))?.ready).toBe(false);
    api.deleteSlice(NS, "s-b");
    await waitUntil(() => !d.current().peers.has(node("svc-1")), "deleted");
    expect(names(d)).toEqual([node("svc-0")]);

    // The server ends the watch: the client watches again from the last version it saw, no relist.
    api.closeWatches();
    await waitUntil(() => api.watches === 2, "second watch");
    const resumed = Number(api.requests.filter((r) => r.watch)[1].query.get("resourceVersion"));
    expect(resumed).toBeGreaterThan(Number(listedAt));
    expect(api.lists).toBe(1);
    api.setSlice(NS, SVC, "s-c", [{ name: "svc-2", ip: "10.0.0.3" }]);
    await waitUntil(() => d.current().peers.has(node("svc-2")), "added after the resumed watch");
  });

  it("relists when the watch's resourceVersion is gone (410)", async () => {
    api.setSlice(NS, SVC, "s-a", [{ name: "svc-0", ip: "10.0.0.1" }]);
    const { d } = discover(captureLogger().logger);
    await waitUntil(() => d.current().synced && api.watches === 1, "watching");
    // The client misses changes, then its history is compacted away.
    api.stallWatches();
    api.setSlice(NS, SVC, "s-a", [{ name: "svc-5", ip: "10.0.0.5" }]);
    api.compact();
    api.closeWatches();
    await waitUntil(() => api.lists === 2, "relisted after 410");
    await waitUntil(() => names(d).join() === node("svc-5"), "view from the new list");
    expect(d.current().synced).toBe(true);
  });

  it("names the missing Role on 403, raises an alarm, and recovers once allowed", async () => {
    api.forbidden = true;
    api.setSlice(NS, SVC, "s-a", [{ name: "svc-0", ip: "10.0.0.1" }]);
    const { logger, lines } = captureLogger();
    const { d } = discover(logger);
    const alarms = new Alarms();
    d.useAlarms(alarms);
    await waitUntil(() => lines.some((l) => l.level === "error"), "error logged");
    const err = lines.find((l) => l.level === "error")?.msg ?? "";
    expect(err).toContain("403 Forbidden");
    expect(err).toContain("Role in namespace brokers");
    expect(err).toContain("get, list and watch on endpointslices");
    expect(err).toContain("discovery.k8s.io");
    await waitUntil(() => alarms.active.has(K8S_ALARM), "alarm raised");
    expect(d.current().synced).toBe(false);
    // Retries fail the same way: logged once at error level.
    await waitUntil(() => api.lists >= 3, "retried");
    expect(lines.filter((l) => l.level === "error")).toHaveLength(1);

    api.forbidden = false;
    await waitUntil(() => d.current().synced, "in sync once allowed");
    expect(names(d)).toEqual([node("svc-0")]);
    expect(alarms.active.has(K8S_ALARM)).toBe(false);
  });

  it("reports an unreachable API server and keeps retrying", async () => {
    const port = await freePort();
    const { logger, lines } = captureLogger();
    const { d } = discover(logger, `http://127.0.0.1:${port}`);
    await waitUntil(() => lines.some((l) => l.level === "warn"), "warning logged");
    expect(lines.find((l) => l.level === "warn")?.msg).toMatch(/^Kubernetes API unreachable/);
    expect(d.current().synced).toBe(false);
  });

  it("needs a pod (KUBERNETES_SERVICE_HOST) for the in-cluster configuration", () => {
    const saved = process.env.KUBERNETES_SERVICE_HOST;
    delete process.env.KUBERNETES_SERVICE_HOST;
    try {
      expect(() => kubeConfigFor("")).toThrow(/KUBERNETES_SERVICE_HOST/);
    } finally {
      if (saved !== undefined) process.env.KUBERNETES_SERVICE_HOST = saved;
    }
  });
});
