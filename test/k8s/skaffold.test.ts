// skaffold.yaml (no skaffold binary runs here): it builds the image from the Dockerfile, deploys
// charts/svc with that image, its profiles give values the chart's schema accepts (dev: 1 pod,
// cluster: 3 pods and 3 etcd members), and it forwards 1883 and 18083 from the client Service.

import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { ChartRenderer, chartDescribeEnabled, find, ROOT } from "./render.ts";
import { schemaErrors } from "./values.ts";

type Json = Record<string, unknown>;
const config = parse(readFileSync(join(ROOT, "skaffold.yaml"), "utf8"));
const release = config.deploy.helm.releases[0];

/** `a.b: v` -> `{a: {b: v}}`, as `helm --set` reads it. */
function fromSetValues(set: Record<string, unknown>): Json {
  const out: Json = {};
  for (const [path, v] of Object.entries(set)) {
    const keys = path.split(".");
    let o = out;
    for (const k of keys.slice(0, -1)) o = (o[k] ??= {}) as Json;
    o[keys.at(-1) as string] = v;
  }
  return out;
}

/** The setValues of the release under a profile (its JSON patches applied; replace only). */
function profileSetValues(name: string): Record<string, unknown> {
  const profile = config.profiles.find((p: { name: string }) => p.name === name);
  let set = release.setValues;
  for (const p of profile.patches) {
    expect(p.op).toBe("replace");
    expect(p.path).toBe("/deploy/helm/releases/0/setValues");
    set = p.value;
  }
  return set;
}

describe("skaffold.yaml", () => {
  it("builds the image from the Dockerfile and deploys the chart with it", () => {
    expect(config.apiVersion).toMatch(/^skaffold\/v4beta\d+$/);
    expect(config.kind).toBe("Config");
    const [artifact] = config.build.artifacts;
    expect(existsSync(join(ROOT, artifact.context, artifact.docker.dockerfile))).toBe(true);
    expect(existsSync(join(ROOT, release.chartPath, "Chart.yaml"))).toBe(true);
    expect(release.setValueTemplates).toEqual({
      "image.repository": `{{.IMAGE_REPO_${artifact.image}}}`,
      "image.tag": `{{.IMAGE_TAG_${artifact.image}}}`,
    });
  });

  it("forwards MQTT 1883 and the dashboard 18083 from the release's client Service", () => {
    const fwd = config.portForward.map((p: Json) => [p.resourceType, p.resourceName, p.port, p.localPort]);
    expect(fwd).toEqual([
      ["service", release.name, 1883, 1883],
      ["service", release.name, 18083, 18083],
    ]);
  });

  it("profiles dev and cluster give values the chart's schema accepts", () => {
    expect(config.profiles.map((p: { name: string }) => p.name)).toEqual(["dev", "cluster"]);
    for (const name of ["dev", "cluster"])
      expect(schemaErrors(fromSetValues(profileSetValues(name))), name).toEqual([]);
    expect(schemaErrors(fromSetValues(release.setValues))).toEqual([]);
  });
});

describe.runIf(chartDescribeEnabled)("skaffold.yaml renders", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  it("dev: 1 broker pod, 1 etcd member; cluster: 3 and 3; the forwarded ports exist", () => {
    const replicas = (profile: string) => {
      const objs = chart.render(fromSetValues(profileSetValues(profile)), { name: release.name });
      const svc = find(objs, "Service", release.name);
      const ports = svc.spec.ports.map((p: { port: number }) => p.port);
      for (const f of config.portForward) expect(ports).toContain(f.port);
      return [
        find(objs, "StatefulSet", release.name).spec.replicas,
        find(objs, "StatefulSet", `${release.name}-etcd`).spec.replicas,
      ];
    };
    expect(replicas("dev")).toEqual([1, 1]);
    expect(replicas("cluster")).toEqual([3, 3]);
  });
});
