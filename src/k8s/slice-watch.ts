// List-then-watch of the EndpointSlices of one Service (`discovery.k8s.io/v1`, label
// `kubernetes.io/service-name=<service>`): the list gives the set and a resourceVersion, the watch
// resumes from it (ADDED / MODIFIED / DELETED, bookmarks), a closed watch is resumed from the last
// version seen, a 410 Gone (history compacted) relists, and any failure is reported and retried
// with exponential backoff. The current set goes to `onChange` after every change.

import { DiscoveryV1Api, type KubeConfig, type V1EndpointSlice, Watch } from "@kubernetes/client-node";

export type FailureKind = "forbidden" | "unauthorized" | "not_found" | "unreachable" | "http";

export interface ApiFailure {
  kind: FailureKind;
  status?: number;
  message: string;
}

export interface SliceWatchOptions {
  kubeConfig: KubeConfig;
  namespace: string;
  serviceName: string;
  /** Every change of the set; `synced` is false after a failure until the next successful list. */
  onChange(slices: ReadonlyMap<string, V1EndpointSlice>, synced: boolean): void;
  onFailure(f: ApiFailure): void;
  onRecovered(): void;
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

interface WatchEventObject {
  code?: number;
  message?: string;
  metadata?: { name?: string; resourceVersion?: string };
}

export class EndpointSliceWatch {
  private slices = new Map<string, V1EndpointSlice>();
  private resourceVersion: string | undefined;
  private synced = false;
  private failing = false;
  private stopped = false;
  private controller: AbortController | null = null;
  private sleeper: { timer: NodeJS.Timeout; wake: () => void } | null = null;
  private running: Promise<void> | null = null;
  private readonly api: DiscoveryV1Api;
  private readonly labelSelector: string;

  constructor(private readonly o: SliceWatchOptions) {
    this.api = o.kubeConfig.makeApiClient(DiscoveryV1Api);
    this.labelSelector = `kubernetes.io/service-name=${o.serviceName}`;
  }

  get path(): string {
    return `/apis/discovery.k8s.io/v1/namespaces/${encodeURIComponent(this.o.namespace)}/endpointslices`;
  }

  start(): void {
    this.running ??= this.run();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.controller?.abort();
    if (this.sleeper !== null) {
      clearTimeout(this.sleeper.timer);
      this.sleeper.wake();
    }
    await this.running;
  }

  private async run(): Promise<void> {
    let failures = 0;
    while (!this.stopped) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        const began = Date.now();
        const outcome = await this.watchOnce();
        if (outcome === "gone") this.resourceVersion = undefined;
        failures = 0;
        // A watch the server ends at once, again and again, must not spin.
        if (outcome === "closed" && Date.now() - began < 200) await this.sleep(this.o.backoffMinMs ?? 250);
      } catch (err) {
        if (this.stopped) return;
        const f = classify(err);
        if (f === "gone") {
          this.resourceVersion = undefined;
          continue;
        }
        this.failing = true;
        if (this.synced) {
          this.synced = false;
          this.o.onChange(this.slices, false);
        }
        this.o.onFailure(f);
        const min = this.o.backoffMinMs ?? 250;
        const max = this.o.backoffMaxMs ?? 10_000;
        await this.sleep(Math.min(max, min * 2 ** Math.min(failures++, 16)));
      }
    }
  }

  private async list(): Promise<void> {
    const res = await this.api.listNamespacedEndpointSlice({
      namespace: this.o.namespace,
      labelSelector: this.labelSelector,
    });
    if (this.stopped) return;
    this.slices = new Map(res.items.map((s) => [s.metadata?.name ?? "", s]));
    this.resourceVersion = res.metadata?.resourceVersion;
    this.synced = true;
    if (this.failing) {
      this.failing = false;
      this.o.onRecovered();
    }
    this.o.onChange(this.slices, true);
  }

  /** One watch request, until the server or a timeout ends it: "closed", or "gone" (410). */
  private watchOnce(): Promise<"closed" | "gone"> {
    return new Promise((resolve, reject) => {
      let gone = false;
      let failed: unknown = null;
      const onEvent = (type: string, obj: WatchEventObject): void => {
        if (type === "ERROR") {
          if (obj?.code === 410) gone = true;
          else failed = Object.assign(new Error(obj?.message ?? "watch error"), { statusCode: obj?.code });
          this.controller?.abort();
          return;
        }
        const rv = obj?.metadata?.resourceVersion;
        if (rv !== undefined) this.resourceVersion = rv;
        const name = obj?.metadata?.name;
        if (type === "BOOKMARK" || name === undefined) return;
        if (type === "ADDED" || type === "MODIFIED") this.slices.set(name, obj as V1EndpointSlice);
        else if (type === "DELETED") this.slices.delete(name);
        else return;
        this.o.onChange(this.slices, this.synced);
      };
      const onDone = (err: unknown): void => {
        this.controller = null;
        if (gone) resolve("gone");
        else if (failed !== null) reject(failed);
        else if (err != null && !this.stopped && !endedByClient(err)) reject(err);
        else resolve("closed");
      };
      new Watch(this.o.kubeConfig)
        .watch(
          this.path,
          {
            labelSelector: this.labelSelector,
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: 300,
          },
          onEvent,
          onDone,
        )
        .then((c) => {
          // Null once the watch already ended (an error answer).
          if (this.stopped) c.abort();
          else if (!c.signal.aborted) this.controller = c;
        }, reject);
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.sleeper = null;
        resolve();
      }, ms);
      this.sleeper = { timer, wake: resolve };
    });
  }
}

/** The client aborted (stop, relist) or its inactivity timeout ended the watch: not a failure. */
function endedByClient(err: unknown): boolean {
  const name = (err as { name?: string }).name;
  return name === "AbortError" || name === "TimeoutError";
}

/** "gone" for a 410 (relist at once), else what went wrong. */
export function classify(err: unknown): ApiFailure | "gone" {
  const e = err as {
    code?: unknown;
    statusCode?: unknown;
    message?: string;
    cause?: { code?: string; message?: string };
  };
  const status = typeof e.statusCode === "number" ? e.statusCode : typeof e.code === "number" ? e.code : undefined;
  if (status === 410) return "gone";
  if (status === 401) return { kind: "unauthorized", status, message: "401 Unauthorized" };
  if (status === 403) return { kind: "forbidden", status, message: "403 Forbidden" };
  if (status === 404) return { kind: "not_found", status, message: "404 Not Found" };
  if (status !== undefined) return { kind: "http", status, message: `HTTP ${status}` };
  const cause = e.cause?.code ?? e.cause?.message;
  return { kind: "unreachable", message: cause === undefined ? (e.message ?? String(err)) : `${e.message}: ${cause}` };
}
