// manifests/ is the chart's render: the committed files are what test/k8s/manifests-gen.ts
// writes, and `kubectl kustomize` of the base and of the cluster-3 overlay gives exactly the
// chart's objects for the defaults and for 3 replicas with 3 etcd members (the Secret's values
// aside: they come from a secret.env the user creates), each valid against the Kubernetes schemas.

import { execFileSync, spawnSync } from "node:child_process";
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CLUSTER3_VALUES, MANIFESTS, manifestFiles } from "./manifests-gen.ts";
import { ChartRenderer, chartDescribeEnabled, type K8sObject, parseObjects } from "./render.ts";
import { validateAll } from "./validate.ts";

const HAS_KUBECTL = spawnSync("kubectl", ["version", "--client"], { stdio: "ignore" }).status === 0;
if (!HAS_KUBECTL) console.warn("!!! kubectl is not on PATH: `kubectl kustomize` of manifests/ is NOT checked !!!");

function listFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? listFiles(p) : [p];
  });
}

const byId = (objs: K8sObject[]) => new Map(objs.map((o) => [`${o.kind}/${o.metadata.name}`, o]));
/** The Secret with its data values replaced by their keys' names (generated values differ). */
const withoutSecretValues = (objs: K8sObject[]) =>
  objs.map((o) =>
    o.kind === "Secret" ? { ...o, data: Object.fromEntries(Object.keys(o.data).map((k) => [k, "<value>"])) } : o,
  );

describe.runIf(chartDescribeEnabled)("manifests/", () => {
  let chart: ChartRenderer;
  let work: string;
  const kustomize = (dir: string): K8sObject[] =>
    parseObjects(
      execFileSync("kubectl", ["kustomize", join(work, "manifests", dir)], {
        encoding: "utf8",
        // Never the default kubeconfig (nor localhost:8080): an empty one of our own.
        env: { ...process.env, KUBECONFIG: join(work, "kubeconfig") },
      }),
    );

  beforeAll(() => {
    chart = new ChartRenderer();
    work = mkdtempSync(join(tmpdir(), "svc-manifests-"));
    writeFileSync(join(work, "kubeconfig"), "");
    cpSync(MANIFESTS, join(work, "manifests"), { recursive: true });
    writeFileSync(
      join(work, "manifests/base/secret.env"),
      "node-cookie=test-cookie\napi-secret=test-secret\ndashboard-password=test-password\n",
    );
  });
  afterAll(() => {
    chart?.dispose();
    if (work) rmSync(work, { recursive: true, force: true });
  });

  it("the committed files are the generator's (regenerate: node --experimental-transform-types test/k8s/manifests-gen.ts)", () => {
    const expected = manifestFiles(chart);
    const committed = listFiles(MANIFESTS)
      .map((p) => relative(MANIFESTS, p))
      .filter((p) => p !== "base/secret.env")
      .sort();
    expect(committed).toEqual([...expected.keys()].sort());
    for (const [path, text] of expected) {
      const actual = readFileSync(join(MANIFESTS, path), "utf8");
      if (path.endsWith(".yaml")) expect(parseObjects(actual), path).toEqual(parseObjects(text));
      else expect(actual, path).toBe(text);
    }
  });

  it.runIf(HAS_KUBECTL)("kubectl kustomize base = the chart's defaults, valid", () => {
    const objs = kustomize("base");
    expect(validateAll(objs)).toEqual([]);
    expect(byId(withoutSecretValues(objs))).toEqual(byId(withoutSecretValues(chart.render())));
    const secret = objs.find((o) => o.kind === "Secret");
    expect(Buffer.from(secret?.data["node-cookie"], "base64").toString()).toBe("test-cookie");
  });

  it.runIf(HAS_KUBECTL)("kubectl kustomize overlays/cluster-3 = the chart with 3 replicas and 3 etcd members", () => {
    const objs = kustomize("overlays/cluster-3");
    expect(validateAll(objs)).toEqual([]);
    expect(byId(withoutSecretValues(objs))).toEqual(byId(withoutSecretValues(chart.render(CLUSTER3_VALUES))));
  });
});
