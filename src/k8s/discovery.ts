// cluster.discovery = k8s: the peers of this node are the pods listed by the EndpointSlices of the
// headless Service (cluster.k8s.service_name), watched through the Kubernetes API with the pod's
// service account (or cluster.k8s.apiserver). Each endpoint becomes a peer: node name (per
// cluster.k8s.address_type), address, readiness (not-ready pods are listed too: the headless
// Service publishes them). The cluster itself stays on etcd (cluster/peer-discovery.ts uses this
// view for addresses and departures). The only importer of @kubernetes/client-node.

import { existsSync } from "node:fs";
import { KubeConfig, type V1EndpointSlice } from "@kubernetes/client-node";
import type { ClusterAlarms } from "../cluster/cluster-node.ts";
import type { DiscoveredPeer, PeerSource, PeerView } from "../cluster/peer-discovery.ts";
import type { Logger } from "../telemetry/logger.ts";
import { type AddressType, nodeNameOf, resolveNamespace, SERVICE_ACCOUNT_DIR } from "./node-names.ts";
import { type ApiFailure, EndpointSliceWatch } from "./slice-watch.ts";

export const K8S_ALARM = "k8s_discovery_failed";

export interface K8sDiscoveryOptions {
  /** Empty: in-cluster configuration (service account); else this server. */
  apiserver: string;
  serviceName: string;
  /** Empty: the pod's namespace (service account file), else POD_NAMESPACE, else default. */
  namespace: string;
  addressType: AddressType;
  appName: string;
  suffix: string;
  logger: Logger;
  /** Service-account directory (token, ca.crt, namespace); tests point it elsewhere. */
  serviceAccountDir?: string;
  backoffMinMs?: number;
  backoffMaxMs?: number;
}

/** The client configuration: in-cluster, or the given server with the service account's token and CA when present. */
export function kubeConfigFor(apiserver: string, saDir = SERVICE_ACCOUNT_DIR): KubeConfig {
  const kc = new KubeConfig();
  if (apiserver === "") {
    if (process.env.KUBERNETES_SERVICE_HOST === undefined) {
      throw new Error(
        "cluster.discovery = k8s with an empty cluster.k8s.apiserver needs to run in a Kubernetes pod (KUBERNETES_SERVICE_HOST is not set)",
      );
    }
    kc.loadFromCluster(saDir === SERVICE_ACCOUNT_DIR ? "" : saDir.slice(0, -SERVICE_ACCOUNT_DIR.length));
    return kc;
  }
  const token = `${saDir}/token`;
  const ca = `${saDir}/ca.crt`;
  kc.loadFromOptions({
    // A plain-HTTP server (a local proxy such as `kubectl proxy`) has no TLS to verify; the client
    // refuses http: unless told so.
    clusters: [
      apiserver.startsWith("http:")
        ? { name: "svc", server: apiserver, skipTLSVerify: true }
        : { name: "svc", server: apiserver, ...(existsSync(ca) ? { caFile: ca } : {}) },
    ],
    users: [
      existsSync(token)
        ? { name: "svc", authProvider: { name: "tokenFile", config: { tokenFile: token } } }
        : { name: "svc" },
    ],
    contexts: [{ name: "svc", cluster: "svc", user: "svc" }],
    currentContext: "svc",
  });
  return kc;
}

export class K8sDiscovery implements PeerSource {
  readonly namespace: string;
  private readonly watch: EndpointSliceWatch;
  private view: PeerView = { peers: new Map(), synced: false };
  private listener: ((v: PeerView) => void) | null = null;
  private alarms: ClusterAlarms | null = null;
  private lastFailure = "";

  constructor(
    private readonly o: K8sDiscoveryOptions,
    kubeConfig?: KubeConfig,
  ) {
    this.namespace = resolveNamespace(o.namespace);
    this.watch = new EndpointSliceWatch({
      kubeConfig: kubeConfig ?? kubeConfigFor(o.apiserver, o.serviceAccountDir),
      namespace: this.namespace,
      serviceName: o.serviceName,
      onChange: (slices, synced) => this.onSlices(slices, synced),
      onFailure: (f) => this.onFailure(f),
      onRecovered: () => this.onRecovered(),
      backoffMinMs: o.backoffMinMs,
      backoffMaxMs: o.backoffMaxMs,
    });
  }

  /** Where the API-failure alarm goes (the node's alarms, once they exist). */
  useAlarms(a: ClusterAlarms): void {
    this.alarms = a;
  }

  start(onChange: (view: PeerView) => void): void {
    this.listener = onChange;
    this.o.logger.info(
      { service: this.o.serviceName, namespace: this.namespace, address_type: this.o.addressType },
      "watching the EndpointSlices of the headless Service for peers",
    );
    this.watch.start();
  }

  stop(): Promise<void> {
    this.listener = null;
    return this.watch.stop();
  }

  /** The current view: every listed pod, ready or not. */
  current(): PeerView {
    return this.view;
  }

  private onSlices(slices: ReadonlyMap<string, V1EndpointSlice>, synced: boolean): void {
    const peers = new Map<string, DiscoveredPeer>();
    const names = {
      addressType: this.o.addressType,
      appName: this.o.appName,
      serviceName: this.o.serviceName,
      namespace: this.namespace,
      suffix: this.o.suffix,
    };
    for (const slice of slices.values()) {
      for (const ep of slice.endpoints ?? []) {
        const address = ep.addresses?.[0];
        if (address === undefined) continue;
        const podName = ep.targetRef?.kind === "Pod" ? ep.targetRef.name : undefined;
        const node = nodeNameOf({ address, hostname: ep.hostname, podName }, names);
        if (node === null) continue;
        // Absent conditions mean ready (API semantics).
        const peer: DiscoveredPeer = {
          node,
          address,
          ready: ep.conditions?.ready !== false,
          terminating: ep.conditions?.terminating === true,
        };
        const known = peers.get(node);
        if (known === undefined || (!known.ready && peer.ready)) peers.set(node, peer);
      }
    }
    this.view = { peers, synced };
    this.listener?.(this.view);
  }

  private onFailure(f: ApiFailure): void {
    const text = describe(f, this.o.serviceName, this.namespace);
    this.alarms?.activate(K8S_ALARM, text, { service: this.o.serviceName, namespace: this.namespace });
    // Once per kind of failure: a retry that fails the same way is not news.
    if (text === this.lastFailure) {
      this.o.logger.debug({ failure: f.kind }, text);
      return;
    }
    this.lastFailure = text;
    if (f.kind === "unreachable") this.o.logger.warn({ err: f.message }, text);
    else this.o.logger.error({ status: f.status }, text);
  }

  private onRecovered(): void {
    this.lastFailure = "";
    this.alarms?.deactivate(K8S_ALARM);
    this.o.logger.info(
      { service: this.o.serviceName, namespace: this.namespace },
      "Kubernetes discovery in sync again",
    );
  }
}

/** One line naming the cause and, for RBAC, the Role the service account needs. */
export function describe(f: ApiFailure, service: string, namespace: string): string {
  switch (f.kind) {
    case "forbidden":
      return `Kubernetes API denied listing/watching EndpointSlices (403 Forbidden): the pod's service account needs a Role in namespace ${namespace} granting get, list and watch on endpointslices (apiGroups: discovery.k8s.io), bound to it by a RoleBinding`;
    case "unauthorized":
      return "Kubernetes API rejected the credentials (401 Unauthorized): check the service-account token mounted in the pod";
    case "not_found":
      return `Kubernetes API has no EndpointSlices in namespace ${namespace} (404): discovery.k8s.io/v1 needs Kubernetes 1.21 or later`;
    case "unreachable":
      return `Kubernetes API unreachable (${f.message}); peers of ${service} are not refreshed, retrying`;
    default:
      return `Kubernetes API answered ${f.message} to the EndpointSlice list/watch of ${service}; retrying`;
  }
}
