// Every port of the spec is on the client Service and the broker container, each can be switched
// off (listener off, port gone), the Service type and node ports are configurable, and the
// headless Service carries the inter-node port for peers, not-ready ones included.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject } from "./render.ts";

/** The spec's ports: Kubernetes port name -> number. */
const SPEC_PORTS = { mqtt: 1883, mqtts: 8883, ws: 8083, wss: 8084, api: 8081, "api-v2": 8080, dashboard: 18083 };

const portMap = (ports: { name: string; port?: number; containerPort?: number }[]) =>
  Object.fromEntries(ports.map((p) => [p.name, p.port ?? p.containerPort]));
const container = (objs: K8sObject[]) => find(objs, "StatefulSet", "svc").spec.template.spec.containers[0];
const env = (objs: K8sObject[]) =>
  Object.fromEntries(container(objs).env.map((e: { name: string; value?: string }) => [e.name, e.value]));

describe.runIf(chartDescribeEnabled)("chart ports", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  it("the client Service and the container expose every spec port; the listeners bind them", () => {
    const objs = chart.render();
    const svc = find(objs, "Service", "svc");
    expect(svc.spec.type).toBe("ClusterIP");
    expect(portMap(svc.spec.ports)).toEqual(SPEC_PORTS);
    for (const p of svc.spec.ports) expect(p.targetPort).toBe(p.name);
    expect(portMap(container(objs).ports)).toEqual({ ...SPEC_PORTS, rpc: 5369 });
    const e = env(objs);
    expect(e.SVC_LISTENER__TCP__EXTERNAL).toBe("0.0.0.0:1883");
    expect(e.SVC_LISTENER__SSL__EXTERNAL).toBe("0.0.0.0:8883");
    expect(e.SVC_LISTENER__WS__EXTERNAL).toBe("0.0.0.0:8083");
    expect(e.SVC_LISTENER__WSS__EXTERNAL).toBe("0.0.0.0:8084");
    expect(e.SVC_MANAGEMENT__LISTENER__HTTP).toBe("0.0.0.0:8081");
    expect(e.SVC_MANAGEMENT__LISTENER__HTTP_V2).toBe("0.0.0.0:8080");
    expect(e.SVC_DASHBOARD__LISTENER__HTTP).toBe("0.0.0.0:18083");
    expect(e.SVC_RPC__TCP_SERVER_PORT).toBe("5369");
  });

  it("the headless Service publishes not-ready peers with the link port and the client ports", () => {
    const objs = chart.render();
    const hl = find(objs, "Service", "svc-headless");
    expect(hl.spec.clusterIP).toBe("None");
    expect(hl.spec.publishNotReadyAddresses).toBe(true);
    expect(portMap(hl.spec.ports)).toEqual({ ...SPEC_PORTS, rpc: 5369 });
    expect(find(objs, "StatefulSet", "svc").spec.serviceName).toBe("svc-headless");
    expect(hl.spec.selector).toEqual(find(objs, "StatefulSet", "svc").spec.selector.matchLabels);
  });

  it("probes: readiness GET /status and liveness GET /livez on the api port", () => {
    const c = container(chart.render());
    expect(c.readinessProbe.httpGet).toEqual({ path: "/status", port: "api" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/livez", port: "api" });
    expect(c.ports.find((p: { name: string }) => p.name === "api").containerPort).toBe(8081);
  });

  it("a port switched off leaves the Service and the container, and its listener is off", () => {
    const objs = chart.render({ ports: { mqtts: { enabled: false }, dashboard: { enabled: false } } });
    const names = find(objs, "Service", "svc").spec.ports.map((p: { name: string }) => p.name);
    expect(names).not.toContain("mqtts");
    expect(names).not.toContain("dashboard");
    expect(names).toContain("mqtt");
    const cnames = container(objs).ports.map((p: { name: string }) => p.name);
    expect(cnames).not.toContain("mqtts");
    expect(env(objs).SVC_LISTENER__SSL__EXTERNAL).toBe("off");
    expect(env(objs).SVC_DASHBOARD__LISTENER__HTTP).toBe("off");
  });

  it("the api port off the client Service still listens for the probes and the headless Service", () => {
    const objs = chart.render({ ports: { api: { enabled: false } } });
    const names = find(objs, "Service", "svc").spec.ports.map((p: { name: string }) => p.name);
    expect(names).not.toContain("api");
    expect(container(objs).ports.map((p: { name: string }) => p.name)).toContain("api");
    expect(env(objs).SVC_MANAGEMENT__LISTENER__HTTP).toBe("0.0.0.0:8081");
    expect(find(objs, "Service", "svc-headless").spec.ports.map((p: { name: string }) => p.name)).toContain("api");
  });

  it("port numbers are configurable end to end", () => {
    const objs = chart.render({ ports: { mqtt: { port: 11883 }, api: { port: 18081 } } });
    expect(portMap(find(objs, "Service", "svc").spec.ports).mqtt).toBe(11883);
    expect(portMap(container(objs).ports).mqtt).toBe(11883);
    expect(env(objs).SVC_LISTENER__TCP__EXTERNAL).toBe("0.0.0.0:11883");
    expect(env(objs).SVC_MANAGEMENT__LISTENER__HTTP).toBe("0.0.0.0:18081");
  });

  it("NodePort: type, fixed node ports where given, externalTrafficPolicy", () => {
    const svc = find(
      chart.render({
        service: { type: "NodePort", externalTrafficPolicy: "Local" },
        ports: { mqtt: { nodePort: 31883 } },
      }),
      "Service",
      "svc",
    );
    expect(svc.spec.type).toBe("NodePort");
    expect(svc.spec.externalTrafficPolicy).toBe("Local");
    const mqtt = svc.spec.ports.find((p: { name: string }) => p.name === "mqtt");
    expect(mqtt.nodePort).toBe(31883);
    expect(svc.spec.ports.filter((p: { nodePort?: number }) => p.nodePort !== undefined)).toHaveLength(1);
  });

  it("LoadBalancer: type, address, source ranges and annotations; ClusterIP ignores them", () => {
    const lb = {
      type: "LoadBalancer",
      loadBalancerIP: "203.0.113.7",
      loadBalancerSourceRanges: ["10.0.0.0/8"],
      annotations: { "example.com/lb": "nlb" },
    };
    const svc = find(chart.render({ service: lb }), "Service", "svc");
    expect(svc.spec.type).toBe("LoadBalancer");
    expect(svc.spec.loadBalancerIP).toBe("203.0.113.7");
    expect(svc.spec.loadBalancerSourceRanges).toEqual(["10.0.0.0/8"]);
    expect(svc.metadata.annotations).toEqual({ "example.com/lb": "nlb" });
    const cip = find(chart.render({ service: { ...lb, type: "ClusterIP" } }), "Service", "svc");
    expect(cip.spec.loadBalancerIP).toBeUndefined();
    expect(cip.spec.loadBalancerSourceRanges).toBeUndefined();
  });
});
