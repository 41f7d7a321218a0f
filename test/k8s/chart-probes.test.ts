// The HTTP endpoints the chart points Kubernetes and Prometheus at exist on a real node: the
// readiness and liveness probes' paths and the ServiceMonitor's path, on the port the chart names
// `api` (the management listener), answer 200 without credentials while the node runs.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject } from "./render.ts";

describe.runIf(chartDescribeEnabled)("the chart's probes and scrape target on a real node", () => {
  let chart: ChartRenderer;
  let node: TestNode;
  let objs: K8sObject[];
  beforeAll(async () => {
    chart = new ChartRenderer();
    objs = chart.render({ metrics: { serviceMonitor: { enabled: true } } });
    node = await startTestNode();
  });
  afterAll(async () => {
    chart?.dispose();
    await node?.close();
  });

  const get = (path: string) => fetch(`http://127.0.0.1:${node.managementPort("http")}${path}`);

  it("readiness and liveness: GET on the management listener, 200 while running", async () => {
    const c = find(objs, "StatefulSet", "svc").spec.template.spec.containers[0];
    const api = c.ports.find((p: { name: string }) => p.name === "api");
    const env = Object.fromEntries(c.env.map((e: { name: string; value?: string }) => [e.name, e.value]));
    // The port named `api` is the one management.listener.http binds.
    expect(env.SVC_MANAGEMENT__LISTENER__HTTP).toBe(`0.0.0.0:${api.containerPort}`);
    for (const probe of [c.readinessProbe, c.livenessProbe]) {
      expect(probe.httpGet.port).toBe("api");
      const res = await get(probe.httpGet.path);
      expect(res.status, probe.httpGet.path).toBe(200);
      await res.body?.cancel();
    }
  });

  it("ServiceMonitor: /metrics answers Prometheus text without credentials", async () => {
    const [endpoint] = find(objs, "ServiceMonitor").spec.endpoints;
    expect(endpoint.port).toBe("api");
    const res = await get(endpoint.path);
    expect(res.status).toBe(200);
    expect(await res.text()).toMatch(/^# (HELP|TYPE) svc_/m);
  });
});
