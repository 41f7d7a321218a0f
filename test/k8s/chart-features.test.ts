// Optional features of the chart: node data persistence, HPA, ServiceMonitor, listener TLS from a
// Secret or cert-manager, OpenTelemetry settings, svc.conf/acl.conf/plugin files from values, and
// the plugins of a first start.

import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseLoadedPlugins } from "../../src/plugins/registry.ts";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject } from "./render.ts";

const broker = (objs: K8sObject[]) => find(objs, "StatefulSet", "svc");
const container = (objs: K8sObject[]) => broker(objs).spec.template.spec.containers[0];
const env = (objs: K8sObject[]): Record<string, string | undefined> =>
  Object.fromEntries(container(objs).env.map((e: { name: string; value?: string }) => [e.name, e.value]));

describe.runIf(chartDescribeEnabled)("chart features", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  it("persistence: a volume claim template replaces the data emptyDir", () => {
    const objs = chart.render({ persistence: { enabled: true, storageClass: "fast", size: "5Gi" } });
    const sts = broker(objs);
    expect(sts.spec.volumeClaimTemplates).toHaveLength(1);
    const claim = sts.spec.volumeClaimTemplates[0];
    expect(claim.metadata.name).toBe("data");
    expect(claim.spec).toMatchObject({ storageClassName: "fast", resources: { requests: { storage: "5Gi" } } });
    expect(sts.spec.template.spec.volumes.some((v: { name: string }) => v.name === "data")).toBe(false);
    expect(broker(chart.render()).spec.volumeClaimTemplates).toBeUndefined();
  });

  it("HPA: targets the StatefulSet, which then leaves replicas to it", () => {
    const objs = chart.render({ autoscaling: { enabled: true, minReplicas: 2, maxReplicas: 7 } });
    const hpa = find(objs, "HorizontalPodAutoscaler");
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: "apps/v1", kind: "StatefulSet", name: "svc" });
    expect(hpa.spec).toMatchObject({ minReplicas: 2, maxReplicas: 7 });
    expect(broker(objs).spec.replicas).toBeUndefined();
    expect(chart.render().some((o) => o.kind === "HorizontalPodAutoscaler")).toBe(false);
  });

  it("ServiceMonitor: scrapes /metrics on the api port of the headless Service's pods", () => {
    const objs = chart.render({ metrics: { serviceMonitor: { enabled: true, labels: { release: "prom" } } } });
    const sm = find(objs, "ServiceMonitor");
    expect(sm.apiVersion).toBe("monitoring.coreos.com/v1");
    expect(sm.metadata.labels?.release).toBe("prom");
    expect(sm.spec.endpoints).toEqual([{ port: "api", path: "/metrics", scheme: "http", interval: "30s" }]);
    const selected = objs.filter(
      (o) =>
        o.kind === "Service" &&
        Object.entries(sm.spec.selector.matchLabels).every(([k, v]) => o.metadata.labels?.[k] === v),
    );
    expect(selected.map((o) => o.metadata.name)).toEqual(["svc-headless"]);
    const ports = selected[0].spec.ports.map((p: { name: string }) => p.name);
    expect(ports).toContain("api");
  });

  it("listener TLS from a Secret: mounted, and the ssl and wss listeners use it", () => {
    const objs = chart.render({ tls: { secretName: "mqtt-tls", useCA: true } });
    const e = env(objs);
    for (const l of ["SSL", "WSS"]) {
      expect(e[`SVC_LISTENER__${l}__EXTERNAL__CERTFILE`]).toBe("/opt/svc/certs/listener/tls.crt");
      expect(e[`SVC_LISTENER__${l}__EXTERNAL__KEYFILE`]).toBe("/opt/svc/certs/listener/tls.key");
      expect(e[`SVC_LISTENER__${l}__EXTERNAL__CACERTFILE`]).toBe("/opt/svc/certs/listener/ca.crt");
    }
    expect(broker(objs).spec.template.spec.volumes).toContainEqual({
      name: "listener-tls",
      secret: { secretName: "mqtt-tls" },
    });
    expect(env(chart.render()).SVC_LISTENER__SSL__EXTERNAL__CERTFILE).toBeUndefined();
  });

  it("cert-manager: a Certificate for the Service names, its Secret used by the listeners", () => {
    const objs = chart.render(
      { tls: { certManager: { enabled: true, issuerRef: { name: "le", kind: "ClusterIssuer" } } } },
      { namespace: "mqtt" },
    );
    const cert = find(objs, "Certificate");
    expect(cert.apiVersion).toBe("cert-manager.io/v1");
    expect(cert.spec.secretName).toBe("svc-tls");
    expect(cert.spec.issuerRef).toEqual({ name: "le", kind: "ClusterIssuer", group: "cert-manager.io" });
    expect(cert.spec.dnsNames).toContain("svc.mqtt.svc.cluster.local");
    expect(cert.spec.dnsNames).toContain("*.svc-headless.mqtt.svc.cluster.local");
    expect(broker(objs).spec.template.spec.volumes).toContainEqual({
      name: "listener-tls",
      secret: { secretName: "svc-tls" },
    });
  });

  it("tracing: off by default; on with the OTLP settings; pod identity always in the resource", () => {
    const off = env(chart.render());
    expect(off.SVC_TELEMETRY__TRACING).toBe("off");
    expect(off.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    const attrs = (off.OTEL_RESOURCE_ATTRIBUTES ?? "").split(",");
    expect(attrs).toContain("k8s.pod.name=$(POD_NAME)");
    expect(attrs).toContain("k8s.namespace.name=$(POD_NAMESPACE)");
    expect(attrs).toContain("service.instance.id=$(SVC_NODE__NAME)");
    const on = env(
      chart.render({
        telemetry: {
          tracing: true,
          otlpEndpoint: "http://otel:4318",
          otlpProtocol: "grpc",
          sampler: "parentbased_traceidratio",
          samplerArg: "0.1",
        },
      }),
    );
    expect(on).toMatchObject({
      SVC_TELEMETRY__TRACING: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.1",
      OTEL_SERVICE_NAME: "svc",
    });
  });

  it("OTLP metrics: off by default; on with the same endpoint and protocol, and its export interval", () => {
    expect(env(chart.render()).SVC_TELEMETRY__METRICS).toBe("off");
    const on = env(
      chart.render({
        telemetry: { metrics: true, otlpEndpoint: "http://otel:4318", metricExportInterval: 15000 },
      }),
    );
    expect(on).toMatchObject({
      SVC_TELEMETRY__TRACING: "off",
      SVC_TELEMETRY__METRICS: "on",
      OTEL_EXPORTER_OTLP_ENDPOINT: "http://otel:4318",
      OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      OTEL_METRIC_EXPORT_INTERVAL: "15000",
    });
    expect(on.OTEL_TRACES_SAMPLER).toBeUndefined();
  });

  it("config, acl.conf and plugin files go into the ConfigMap the node loads (SVC_CONFIG)", () => {
    const objs = chart.render({
      config: {
        "log.level": "debug",
        "zone.external.max_inflight": 64,
        "retainer.max_retained_messages": 1000000,
        "mqtt.response_information": "a # b",
      },
      aclConf: "{allow, all}.\n",
      pluginConfs: { svc_auth_http: "auth.http.auth_req.url = http://auth:8991/mqtt/auth\n" },
    });
    const cm = find(objs, "ConfigMap");
    const lines = (cm.data["svc.conf"] as string).split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    expect(lines).toEqual([
      "acl_file = /opt/svc/config/acl.conf",
      "plugins.etc_dir = /opt/svc/config/plugins",
      "log.level = debug",
      'mqtt.response_information = "a # b"',
      "retainer.max_retained_messages = 1000000",
      "zone.external.max_inflight = 64",
    ]);
    expect(cm.data["acl.conf"]).toBe("{allow, all}.\n");
    expect(cm.data["svc_auth_http.conf"]).toContain("auth.http.auth_req.url");
    const sts = broker(objs);
    expect(env(objs).SVC_CONFIG).toBe("/opt/svc/config/svc.conf");
    const vol = sts.spec.template.spec.volumes.find((v: { name: string }) => v.name === "config");
    expect(vol.configMap.items).toEqual([
      { key: "svc.conf", path: "svc.conf" },
      { key: "acl.conf", path: "acl.conf" },
      { key: "svc_auth_http.conf", path: "plugins/svc_auth_http.conf" },
    ]);
    // A config change rolls the pods.
    const before = sts.spec.template.metadata.annotations["checksum/config"];
    const after = broker(chart.render({ config: { "log.level": "info" } })).spec.template.metadata.annotations[
      "checksum/config"
    ];
    expect(after).not.toBe(before);
  });

  it("the default svc.conf sets nothing (every key at its default or from SVC_ variables)", () => {
    const conf = find(chart.render(), "ConfigMap").data["svc.conf"] as string;
    expect(conf.split("\n").filter((l) => l !== "" && !l.startsWith("#"))).toEqual([]);
  });

  it("loaded plugins: an init container writes loaded_plugins on a first start only", () => {
    expect(broker(chart.render()).spec.template.spec.initContainers).toBeUndefined();
    const spec = broker(chart.render({ loadedPlugins: ["svc_retainer", "svc_auth_http"] })).spec.template.spec;
    const [init] = spec.initContainers;
    expect(init.image).toBe(container(chart.render()).image);
    expect(init.volumeMounts).toEqual([{ name: "data", mountPath: "/opt/svc/data" }]);
    expect(init.securityContext).toEqual(container(chart.render()).securityContext);
    const initEnv = Object.fromEntries(init.env.map((e: { name: string; value: string }) => [e.name, e.value]));
    expect(initEnv.DATA_DIR).toBe("/opt/svc/data");
    // Its command, run for real on a temp data dir, twice: the second run keeps what is there.
    const dir = mkdtempSync(join(tmpdir(), "svc-plugins-"));
    try {
      const run = () => execFileSync(process.execPath, init.command.slice(1), { env: { ...initEnv, DATA_DIR: dir } });
      expect(init.command[0]).toBe("node");
      run();
      const file = join(dir, "loaded_plugins");
      expect(parseLoadedPlugins(readFileSync(file, "utf8"))).toEqual(["svc_retainer", "svc_auth_http"]);
      writeFileSync(file, "{svc_retainer, true}.\n");
      run();
      expect(parseLoadedPlugins(readFileSync(file, "utf8"))).toEqual(["svc_retainer"]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
