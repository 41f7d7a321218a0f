// The node accepts what the chart gives it: for every documented option, the broker container's
// environment (downward-API and Secret values filled in, $(VAR) expanded as Kubernetes does) and
// the ConfigMap's files, laid out like the pod's volumes in a temp dir, load with the project's
// own configuration loader, and the node name, cluster and listener settings come out as meant.

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, SCHEMA } from "../../src/config/index.ts";
import { OPTIONS } from "./options.ts";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject } from "./render.ts";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { key: string } };
}
const FIELDS: Record<string, string> = {
  "metadata.name": "svc-0",
  "metadata.namespace": "mqtt",
  "spec.nodeName": "n1",
};

/** The container's environment as the pod sees it; paths under /opt/svc moved under `root`. */
function podEnv(env: EnvVar[], root: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const e of env) {
    let v = e.value;
    if (e.valueFrom?.fieldRef) v = FIELDS[e.valueFrom.fieldRef.fieldPath];
    if (e.valueFrom?.secretKeyRef) v = `secret-${e.valueFrom.secretKeyRef.key}`;
    if (v === undefined) throw new Error(`no value for ${e.name}`);
    // Kubernetes expands $(NAME) from the variables defined before this one.
    v = v.replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n: string) => out[n] ?? m);
    out[e.name] = v.replaceAll("/opt/svc/", `${root}/opt/svc/`);
  }
  return out;
}

/** Writes the ConfigMap's items and the mounted Secrets' files where the pod's volumes put them. */
function layOutVolumes(sts: K8sObject, cm: K8sObject, root: string): void {
  const spec = sts.spec.template.spec;
  for (const m of spec.containers[0].volumeMounts as { name: string; mountPath: string }[]) {
    const vol = spec.volumes.find((v: { name: string }) => v.name === m.name);
    const dir = join(root, m.mountPath);
    mkdirSync(dir, { recursive: true });
    if (vol?.configMap)
      for (const item of vol.configMap.items as { key: string; path: string }[]) {
        mkdirSync(dirname(join(dir, item.path)), { recursive: true });
        writeFileSync(join(dir, item.path), cm.data[item.key].replaceAll("/opt/svc/", `${root}/opt/svc/`));
      }
    if (vol?.secret) for (const f of ["tls.crt", "tls.key", "ca.crt"]) writeFileSync(join(dir, f), "PEM");
  }
}

describe.runIf(chartDescribeEnabled)("the node loads the chart's configuration", () => {
  let chart: ChartRenderer;
  let root: string;
  beforeAll(() => {
    chart = new ChartRenderer();
    root = mkdtempSync(join(tmpdir(), "svc-pod-"));
  });
  afterAll(() => {
    chart?.dispose();
    if (root) rmSync(root, { recursive: true, force: true });
  });

  for (const [name, opt] of Object.entries(OPTIONS)) {
    it(name, (ctx) => {
      if (name === "etcd TLS" && !("cluster.etcd.ssl.certfile" in SCHEMA)) {
        console.warn(
          "!!! cluster.etcd.ssl.* are not configuration keys: the chart's etcd TLS settings are NOT checked",
        );
        ctx.skip();
      }
      const objs = chart.render(opt.values, { namespace: "mqtt" });
      const sts = find(objs, "StatefulSet", "svc");
      const podRoot = join(root, name.replace(/\W+/g, "-"));
      layOutVolumes(sts, find(objs, "ConfigMap"), podRoot);
      const env = podEnv(sts.spec.template.spec.containers[0].env, podRoot);
      const config = loadConfig({ env, cwd: podRoot });
      expect(config.get("node.name")).toBe("svc@svc-0.svc-headless.mqtt.svc.cluster.local");
      expect(config.get("node.cookie")).toBe("secret-node-cookie");
      expect(config.get("management.default_application.secret")).toBe("secret-api-secret");
      expect(config.get("dashboard.default_user.password")).toBe("secret-dashboard-password");
      expect(config.get("cluster.discovery")).toBe(name === "etcd discovery" ? "etcd" : "k8s");
      expect(config.get("management.listener.http")).toEqual({ host: "0.0.0.0", port: 8081 });
      if (config.get("cluster.discovery") === "k8s") {
        // The name discovery builds for this pod from its EndpointSlice entry is the node's own.
        const built = `${config.get("cluster.k8s.app_name")}@svc-0.${config.get("cluster.k8s.service_name")}.${config.get("cluster.k8s.namespace")}.${config.get("cluster.k8s.suffix")}`;
        expect(built).toBe(config.get("node.name"));
      }
    });
  }
});
