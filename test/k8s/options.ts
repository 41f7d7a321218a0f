// The documented options of charts/svc, as values the tests render (each one next to the defaults).

export interface ChartOption {
  values: Record<string, unknown>;
  apiVersions?: string[];
}

export const OPTIONS: Record<string, ChartOption> = {
  defaults: { values: {} },
  "etcd discovery": { values: { cluster: { discovery: "etcd" } } },
  "external etcd": {
    values: { etcd: { bundled: false, endpoints: ["http://etcd-a.example:2379", "http://etcd-b.example:2379"] } },
  },
  "3 replicas, 3 etcd members": { values: { replicaCount: 3, etcd: { replicas: 3 } } },
  "etcd TLS": { values: { etcd: { replicas: 3, tls: { enabled: true, secretName: "etcd-tls" } } } },
  "etcd without volumes": { values: { etcd: { persistence: { enabled: false } } } },
  NodePort: {
    values: {
      service: { type: "NodePort", externalTrafficPolicy: "Local" },
      ports: { mqtt: { nodePort: 31883 }, dashboard: { nodePort: 31083 } },
    },
  },
  LoadBalancer: {
    values: {
      service: {
        type: "LoadBalancer",
        loadBalancerIP: "203.0.113.7",
        loadBalancerSourceRanges: ["10.0.0.0/8"],
        annotations: { "service.beta.kubernetes.io/aws-load-balancer-type": "nlb" },
        externalIPs: ["203.0.113.8"],
      },
    },
  },
  "ports off": {
    values: {
      ports: {
        mqtts: { enabled: false },
        ws: { enabled: false },
        wss: { enabled: false },
        api: { enabled: false },
        apiV2: { enabled: false },
        dashboard: { enabled: false },
      },
    },
  },
  persistence: { values: { persistence: { enabled: true, storageClass: "fast", size: "5Gi" } } },
  HPA: { values: { autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 7 } } },
  ServiceMonitor: {
    values: { metrics: { serviceMonitor: { enabled: true, labels: { release: "prom" }, scrapeTimeout: "10s" } } },
    apiVersions: ["monitoring.coreos.com/v1"],
  },
  "TLS secret": { values: { tls: { secretName: "mqtt-tls", useCA: true } } },
  "cert-manager": {
    values: { tls: { certManager: { enabled: true, issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } } } },
    apiVersions: ["cert-manager.io/v1"],
  },
  tracing: {
    values: {
      telemetry: {
        tracing: true,
        otlpEndpoint: "http://otel-collector.observability:4318",
        otlpProtocol: "http/protobuf",
        sampler: "parentbased_traceidratio",
        samplerArg: "0.1",
      },
    },
  },
  "config, acl and plugins": {
    values: {
      config: {
        "log.level": "debug",
        "zone.external.max_inflight": 64,
        "zone.external.keepalive_backoff": 0.75,
        "zone.external.enable_acl": false,
        "mqtt.max_packet_size": "2MB",
        "retainer.max_retained_messages": 1000000,
      },
      aclConf: "{allow, all}.\n",
      pluginConfs: { svc_auth_http: "auth.http.auth_req.url = http://auth:8991/mqtt/auth\n" },
    },
  },
  "loaded plugins": { values: { loadedPlugins: ["svc_retainer", "svc_auth_http"] } },
  "existing secret": { values: { auth: { existingSecret: "svc-credentials" } } },
  "scheduling and extras": {
    values: {
      podAntiAffinity: "hard",
      tolerations: [{ key: "dedicated", operator: "Equal", value: "mqtt", effect: "NoSchedule" }],
      nodeSelector: { "kubernetes.io/os": "linux" },
      podAnnotations: { "example.com/team": "iot" },
      extraEnv: [{ name: "SVC_LOG__LEVEL", value: "debug" }],
      extraVolumes: [{ name: "extra", emptyDir: {} }],
      extraVolumeMounts: [{ name: "extra", mountPath: "/opt/svc/extra" }],
      imagePullSecrets: [{ name: "regcred" }],
    },
  },
};
