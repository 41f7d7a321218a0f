// Every documented option of charts/svc renders, passes values.schema.json, and every rendered
// object validates against the Kubernetes schemas with no unknown field.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OPTIONS } from "./options.ts";
import { ChartRenderer, chartDescribeEnabled, kinds } from "./render.ts";
import { validateAll } from "./validate.ts";
import { schemaErrors } from "./values.ts";

describe.runIf(chartDescribeEnabled)("chart render", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  for (const [name, opt] of Object.entries(OPTIONS)) {
    it(`${name}: values pass the schema, objects validate`, () => {
      expect(schemaErrors(opt.values)).toEqual([]);
      const objs = chart.render(opt.values, { apiVersions: opt.apiVersions, namespace: "mqtt" });
      expect(validateAll(objs)).toEqual([]);
      const ids = kinds(objs);
      expect(new Set(ids).size).toBe(ids.length);
      for (const o of objs) expect(o.metadata.namespace, `${o.kind}/${o.metadata.name}`).toBe("mqtt");
    });
  }

  it("object names follow the release name", () => {
    expect(kinds(chart.render({}, { name: "prod" }))).toEqual([
      "ConfigMap/prod-svc",
      "PodDisruptionBudget/prod-svc",
      "PodDisruptionBudget/prod-svc-etcd",
      "Role/prod-svc",
      "RoleBinding/prod-svc",
      "Secret/prod-svc",
      "Service/prod-svc",
      "Service/prod-svc-etcd-headless",
      "Service/prod-svc-headless",
      "ServiceAccount/prod-svc",
      "StatefulSet/prod-svc",
      "StatefulSet/prod-svc-etcd",
    ]);
  });

  it("NOTES.txt tells how to connect", () => {
    const notes = chart.notes({}, { name: "svc", namespace: "mqtt" });
    expect(notes).toContain("svc.mqtt.svc.cluster.local:1883");
    expect(notes).toContain("port-forward service/svc 1883:1883");
    expect(notes).toContain("get secret svc");
    expect(notes).toContain("self-signed");
    const lb = chart.notes({ service: { type: "LoadBalancer" }, tls: { secretName: "t" } });
    expect(lb).toContain("loadBalancer.ingress");
    expect(lb).not.toContain("self-signed");
  });

  it("a template error names the problem", () => {
    expect(() => chart.render({ etcd: { bundled: false } })).toThrow(/etcd.endpoints is required/);
    expect(() => chart.render({ tls: { certManager: { enabled: true } } })).toThrow(/issuerRef.name is required/);
    expect(() => chart.render({ etcd: { replicas: 2 } })).toThrow(/etcd.replicas must be 1 or 3/);
  });
});
