// A stand-in for the Kubernetes API server's EndpointSlice endpoints (no real API server can run
// on this machine: none is packaged for apt or npm, and there is no container engine). It serves
// `GET /apis/discovery.k8s.io/v1/namespaces/<ns>/endpointslices` as the API does: a list with a
// resourceVersion, and with `watch=true` a stream of JSON lines (ADDED / MODIFIED / DELETED) from
// the given resourceVersion, answering an ERROR 410 event when that version was compacted away.
// It can also answer 403 Forbidden (missing RBAC), end its watches, and compact its history.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface FakePod {
  name: string;
  ip: string;
  ready?: boolean;
  terminating?: boolean;
}

interface Slice {
  name: string;
  namespace: string;
  service: string;
  pods: FakePod[];
  rv: number;
}

interface Event {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  slice: Slice;
}

interface Watcher {
  res: ServerResponse;
  namespace: string;
  service: string;
}

export class FakeApiServer {
  private server: Server | null = null;
  private rv = 100;
  private readonly slices = new Map<string, Slice>();
  private readonly history: Event[] = [];
  private readonly watchers = new Set<Watcher>();
  private compactedBelow = 0;
  /** Open watches get no events (a stalled connection) until closeWatches(). */
  private stalled = false;
  /** Answer every request with 403 Forbidden. */
  forbidden = false;
  readonly requests: { watch: boolean; query: URLSearchParams; auth: string | undefined }[] = [];
  url = "";

  async start(): Promise<void> {
    const server = createServer((req, res) => this.handle(req, res));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    this.server = server;
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    this.closeWatches();
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
  }

  get lists(): number {
    return this.requests.filter((r) => !r.watch).length;
  }

  get watches(): number {
    return this.requests.filter((r) => r.watch).length;
  }

  /** Creates or replaces the slice `name` of `service` in `namespace`. */
  setSlice(namespace: string, service: string, name: string, pods: FakePod[]): void {
    const key = `${namespace}/${name}`;
    const type = this.slices.has(key) ? "MODIFIED" : "ADDED";
    const slice: Slice = { name, namespace, service, pods, rv: ++this.rv };
    this.slices.set(key, slice);
    this.emit({ rv: slice.rv, type, slice });
  }

  deleteSlice(namespace: string, name: string): void {
    const key = `${namespace}/${name}`;
    const slice = this.slices.get(key);
    if (slice === undefined) return;
    this.slices.delete(key);
    this.emit({ rv: ++this.rv, type: "DELETED", slice: { ...slice, rv: this.rv } });
  }

  /** Forgets the history up to now: a watch from an older version gets 410 Gone. */
  compact(): void {
    this.compactedBelow = this.rv + 1;
    this.history.length = 0;
  }

  /** Ends every open watch (as the API server does on its timeout or a restart). */
  closeWatches(): void {
    for (const w of this.watchers) w.res.end();
    this.watchers.clear();
    this.stalled = false;
  }

  /** Open watches stop receiving events, so their clients miss what happens next. */
  stallWatches(): void {
    this.stalled = true;
  }

  private emit(ev: Event): void {
    this.history.push(ev);
    if (this.stalled) return;
    for (const w of this.watchers) {
      if (w.namespace === ev.slice.namespace && w.service === ev.slice.service) this.send(w.res, ev);
    }
  }

  private send(res: ServerResponse, ev: Event): void {
    res.write(`${JSON.stringify({ type: ev.type, object: sliceObject(ev.slice) })}\n`);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://x");
    const m = /^\/apis\/discovery\.k8s\.io\/v1\/namespaces\/([^/]+)\/endpointslices$/.exec(url.pathname);
    const watch = url.searchParams.get("watch") === "true";
    this.requests.push({ watch, query: url.searchParams, auth: req.headers.authorization });
    if (this.forbidden) return status(res, 403, "Forbidden", "endpointslices.discovery.k8s.io is forbidden");
    if (m === null || req.method !== "GET") return status(res, 404, "NotFound", "not found");
    const namespace = decodeURIComponent(m[1]);
    const sel = /^kubernetes\.io\/service-name=(.+)$/.exec(url.searchParams.get("labelSelector") ?? "");
    if (sel === null) return status(res, 400, "BadRequest", "this fake needs the service-name label selector");
    const service = sel[1];
    const mine = (s: Slice) => s.namespace === namespace && s.service === service;
    if (!watch) {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(
        JSON.stringify({
          kind: "EndpointSliceList",
          apiVersion: "discovery.k8s.io/v1",
          metadata: { resourceVersion: String(this.rv) },
          items: [...this.slices.values()].filter(mine).map(sliceObject),
        }),
      );
      return;
    }
    const from = Number(url.searchParams.get("resourceVersion") ?? this.rv);
    res.writeHead(200, { "content-type": "application/json", "transfer-encoding": "chunked" });
    res.flushHeaders();
    if (from < this.compactedBelow - 1) {
      res.end(
        `${JSON.stringify({ type: "ERROR", object: { kind: "Status", apiVersion: "v1", status: "Failure", reason: "Expired", code: 410, message: `too old resource version: ${from}` } })}\n`,
      );
      return;
    }
    for (const ev of this.history) if (ev.rv > from && mine(ev.slice)) this.send(res, ev);
    const w: Watcher = { res, namespace, service };
    this.watchers.add(w);
    req.on("close", () => this.watchers.delete(w));
  }
}

function status(res: ServerResponse, code: number, reason: string, message: string): void {
  res.writeHead(code, { "content-type": "application/json" });
  res.end(JSON.stringify({ kind: "Status", apiVersion: "v1", status: "Failure", reason, message, code }));
}

function sliceObject(s: Slice): unknown {
  return {
    kind: "EndpointSlice",
    apiVersion: "discovery.k8s.io/v1",
    metadata: {
      name: s.name,
      namespace: s.namespace,
      resourceVersion: String(s.rv),
      labels: { "kubernetes.io/service-name": s.service },
    },
    addressType: "IPv4",
    endpoints: s.pods.map((p) => ({
      addresses: [p.ip],
      hostname: p.name,
      conditions: { ready: p.ready ?? true, serving: p.ready ?? true, terminating: p.terminating ?? false },
      targetRef: { kind: "Pod", name: p.name, namespace: s.namespace },
    })),
    ports: [{ name: "ekka", port: 5369, protocol: "TCP" }],
  };
}
