// The cookie and the default credentials come from a Secret: generated at random when not given
// (never a fixed default), kept on an upgrade (helm's `lookup` finds the release's Secret; the Go
// renderer is given one, `helm template` has no cluster), taken from values when given, or from an
// existing Secret.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject, rendersLookup } from "./render.ts";

const SECRET_ENV = {
  SVC_NODE__COOKIE: "node-cookie",
  SVC_MANAGEMENT__DEFAULT_APPLICATION__SECRET: "api-secret",
  SVC_DASHBOARD__DEFAULT_USER__PASSWORD: "dashboard-password",
};
const decoded = (objs: K8sObject[]) =>
  Object.fromEntries(
    Object.entries(find(objs, "Secret").data as Record<string, string>).map(([k, v]) => [
      k,
      Buffer.from(v, "base64").toString(),
    ]),
  );
const envOf = (objs: K8sObject[]) =>
  find(objs, "StatefulSet", "svc").spec.template.spec.containers[0].env as {
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string; key: string } };
  }[];

describe.runIf(chartDescribeEnabled)("chart secret", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  it("generates random values when none are given", () => {
    const first = decoded(chart.render());
    const second = decoded(chart.render());
    expect(Object.keys(first).sort()).toEqual(["api-secret", "dashboard-password", "node-cookie"]);
    for (const [key, v] of Object.entries(first)) {
      expect(v, key).toMatch(/^[A-Za-z0-9]{32}$/);
      expect(second[key], key).not.toBe(v);
    }
    expect(new Set(Object.values(first)).size).toBe(3);
  });

  it("the node reads the cookie and the credentials from the Secret, never from a plain value", () => {
    const env = envOf(chart.render());
    for (const [name, key] of Object.entries(SECRET_ENV)) {
      const e = env.find((x) => x.name === name);
      expect(e?.value, name).toBeUndefined();
      expect(e?.valueFrom?.secretKeyRef, name).toEqual({ name: "svc", key });
    }
  });

  it.runIf(rendersLookup)("an upgrade keeps the values of the release's Secret; values given still win", () => {
    const first = find(chart.render(), "Secret");
    expect(find(chart.render({}, { lookup: [first] }), "Secret").data).toEqual(first.data);
    const changed = decoded(chart.render({ auth: { cookie: "new-cookie" } }, { lookup: [first] }));
    expect(changed["node-cookie"]).toBe("new-cookie");
    expect(changed["api-secret"]).toBe(Buffer.from(first.data["api-secret"], "base64").toString());
    // Another release's (or namespace's) Secret is not taken.
    const other = { ...first, metadata: { ...first.metadata, namespace: "elsewhere" } };
    expect(find(chart.render({}, { lookup: [other] }), "Secret").data).not.toEqual(first.data);
  });

  it("takes the values given", () => {
    const objs = chart.render({ auth: { cookie: "c00kie", apiAppSecret: "s3cret", dashboardPassword: "pa55" } });
    expect(decoded(objs)).toEqual({ "node-cookie": "c00kie", "api-secret": "s3cret", "dashboard-password": "pa55" });
  });

  it("an existing Secret: none is created and the node reads that one", () => {
    const objs = chart.render({ auth: { existingSecret: "svc-credentials" } });
    expect(objs.filter((o) => o.kind === "Secret")).toEqual([]);
    const env = envOf(objs);
    for (const [name, key] of Object.entries(SECRET_ENV))
      expect(env.find((x) => x.name === name)?.valueFrom?.secretKeyRef).toEqual({ name: "svc-credentials", key });
  });
});
