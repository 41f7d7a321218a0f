// Cluster wiring of the chart: node names from the downward API, discovery settings and RBAC
// exactly when discovery is k8s, bundled etcd (1 or 3 members, consistent bootstrap flags) or
// external endpoints, TLS to etcd, and a termination grace period longer than the drain.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChartRenderer, chartDescribeEnabled, find, type K8sObject } from "./render.ts";

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: { fieldRef?: { fieldPath: string }; secretKeyRef?: { name: string; key: string } };
}
const broker = (objs: K8sObject[]) =>
  find(
    objs.filter((o) => o.metadata.labels?.["app.kubernetes.io/component"] === "broker"),
    "StatefulSet",
  );
const envList = (objs: K8sObject[]): EnvVar[] => broker(objs).spec.template.spec.containers[0].env;
const env = (objs: K8sObject[]) => Object.fromEntries(envList(objs).map((e) => [e.name, e.value]));
const RBAC = ["ServiceAccount", "Role", "RoleBinding"];

describe.runIf(chartDescribeEnabled)("chart cluster wiring", () => {
  let chart: ChartRenderer;
  beforeAll(() => {
    chart = new ChartRenderer();
  });
  afterAll(() => chart?.dispose());

  it("node name: <app>@<pod>.<headless>.<namespace>.svc.<domain> from the downward API", () => {
    const objs = chart.render({}, { name: "prod", namespace: "mqtt" });
    const list = envList(objs);
    const at = (n: string) => list.findIndex((e) => e.name === n);
    expect(list[at("POD_NAME")].valueFrom?.fieldRef?.fieldPath).toBe("metadata.name");
    expect(list[at("POD_NAMESPACE")].valueFrom?.fieldRef?.fieldPath).toBe("metadata.namespace");
    const name = list[at("SVC_NODE__NAME")].value;
    expect(name).toBe("svc@$(POD_NAME).prod-svc-headless.$(POD_NAMESPACE).svc.cluster.local");
    // Kubernetes expands $(VAR) only from variables defined earlier in the list.
    expect(at("POD_NAME")).toBeLessThan(at("SVC_NODE__NAME"));
    expect(at("SVC_NODE__NAME")).toBeLessThan(at("OTEL_RESOURCE_ATTRIBUTES"));
    expect(broker(objs).metadata.name).toBe("prod-svc");
    expect(broker(objs).spec.podManagementPolicy).toBe("Parallel");
  });

  it("k8s discovery: its settings, a ServiceAccount and a Role on EndpointSlices only", () => {
    const objs = chart.render({}, { namespace: "mqtt" });
    const e = env(objs);
    expect(e.SVC_CLUSTER__DISCOVERY).toBe("k8s");
    expect(e.SVC_CLUSTER__K8S__SERVICE_NAME).toBe("svc-headless");
    expect(e.SVC_CLUSTER__K8S__NAMESPACE).toBe("$(POD_NAMESPACE)");
    expect(e.SVC_CLUSTER__K8S__ADDRESS_TYPE).toBe("hostname");
    expect(e.SVC_CLUSTER__K8S__APP_NAME).toBe("svc");
    expect(e.SVC_CLUSTER__K8S__SUFFIX).toBe("svc.cluster.local");
    expect(e.SVC_CLUSTER__K8S__APISERVER).toBeUndefined(); // in-cluster configuration
    const role = find(objs, "Role");
    expect(role.rules).toEqual([
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
    ]);
    const binding = find(objs, "RoleBinding");
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "svc" });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "svc", namespace: "mqtt" }]);
    expect(broker(objs).spec.template.spec.serviceAccountName).toBe("svc");
  });

  it("etcd discovery: no RBAC objects, no service account token, no k8s settings", () => {
    const objs = chart.render({ cluster: { discovery: "etcd" } });
    expect(objs.filter((o) => RBAC.includes(o.kind))).toEqual([]);
    const spec = broker(objs).spec.template.spec;
    expect(spec.serviceAccountName).toBeUndefined();
    expect(spec.automountServiceAccountToken).toBe(false);
    expect(env(objs).SVC_CLUSTER__DISCOVERY).toBe("etcd");
    expect(Object.keys(env(objs)).filter((n) => n.startsWith("SVC_CLUSTER__K8S__"))).toEqual([]);
  });

  it("bundled etcd, 1 member: its headless Service, volumes, and the broker pointed at it", () => {
    const objs = chart.render();
    const etcd = find(objs, "StatefulSet", "svc-etcd");
    expect(etcd.spec.replicas).toBe(1);
    expect(etcd.spec.serviceName).toBe("svc-etcd-headless");
    expect(find(objs, "Service", "svc-etcd-headless").spec.publishNotReadyAddresses).toBe(true);
    expect(etcd.spec.volumeClaimTemplates[0].spec.resources.requests.storage).toBe("1Gi");
    expect(etcd.spec.template.spec.containers[0].image).toBe("quay.io/coreos/etcd:v3.5.21");
    expect(env(objs).SVC_CLUSTER__ETCD__SERVER).toBe("http://svc-etcd-0.svc-etcd-headless:2379");
    expect(env(objs).SVC_CLUSTER__ETCD__PREFIX).toBe("svccl");
  });

  it("bundled etcd, 3 members: initial-cluster names every member as it advertises itself", () => {
    const objs = chart.render({ etcd: { replicas: 3, image: { tag: "v3.5.17" } } });
    const etcd = find(objs, "StatefulSet", "svc-etcd");
    expect(etcd.spec.replicas).toBe(3);
    expect(etcd.spec.podManagementPolicy).toBe("Parallel");
    const c = etcd.spec.template.spec.containers[0];
    expect(c.image).toBe("quay.io/coreos/etcd:v3.5.17");
    const flag = (n: string) => (c.args as string[]).find((a) => a.startsWith(`--${n}=`))?.slice(n.length + 3);
    const members = flag("initial-cluster")?.split(",") ?? [];
    expect(members).toHaveLength(3);
    for (let i = 0; i < 3; i++) {
      const pod = `svc-etcd-${i}`;
      // What member i advertises, with $(POD_NAME) as Kubernetes expands it.
      const advertised = flag("initial-advertise-peer-urls")?.replace("$(POD_NAME)", pod);
      expect(members[i]).toBe(`${pod}=${advertised}`);
    }
    expect(flag("name")).toBe("$(POD_NAME)");
    expect(flag("initial-cluster-state")).toBe("new");
    expect(env(objs).SVC_CLUSTER__ETCD__SERVER?.split(",")).toEqual(
      [0, 1, 2].map((i) => `http://svc-etcd-${i}.svc-etcd-headless:2379`),
    );
  });

  it("external etcd: no etcd objects, the endpoints as given", () => {
    const endpoints = ["https://etcd-a.example:2379", "https://etcd-b.example:2379"];
    const objs = chart.render({ etcd: { bundled: false, endpoints } });
    expect(objs.filter((o) => o.metadata.name.includes("etcd"))).toEqual([]);
    expect(env(objs).SVC_CLUSTER__ETCD__SERVER).toBe(endpoints.join(","));
  });

  it("TLS to etcd: https everywhere, the Secret mounted on both sides, client certificate keys set", () => {
    const objs = chart.render({ etcd: { tls: { enabled: true, secretName: "etcd-tls" } } });
    const e = env(objs);
    expect(e.SVC_CLUSTER__ETCD__SERVER).toBe("https://svc-etcd-0.svc-etcd-headless:2379");
    expect(e.SVC_CLUSTER__ETCD__SSL__CERTFILE).toBe("/opt/svc/certs/etcd/tls.crt");
    expect(e.SVC_CLUSTER__ETCD__SSL__KEYFILE).toBe("/opt/svc/certs/etcd/tls.key");
    expect(e.SVC_CLUSTER__ETCD__SSL__CACERTFILE).toBe("/opt/svc/certs/etcd/ca.crt");
    const vols = broker(objs).spec.template.spec.volumes;
    expect(vols).toContainEqual({ name: "etcd-tls", secret: { secretName: "etcd-tls" } });
    const etcd = find(objs, "StatefulSet", "svc-etcd").spec.template.spec;
    expect(etcd.volumes).toContainEqual({ name: "tls", secret: { secretName: "etcd-tls" } });
    const args: string[] = etcd.containers[0].args;
    expect(args).toContain("--client-cert-auth=true");
    expect(args.filter((a) => a.includes("://") && !a.includes("metrics")).every((a) => a.includes("https://"))).toBe(
      true,
    );
  });

  it("termination grace period: drain timeout + 15 s by default, must exceed the drain", () => {
    const grace = (values: object) => broker(chart.render(values)).spec.template.spec.terminationGracePeriodSeconds;
    expect(grace({})).toBe(45);
    expect(env(chart.render()).SVC_NODE__DRAIN_TIMEOUT).toBe("30s");
    expect(grace({ node: { drainTimeout: "2m" } })).toBe(135);
    expect(grace({ node: { drainTimeout: "1500ms" } })).toBe(17);
    expect(grace({ node: { drainTimeout: "1500" } })).toBe(17);
    expect(grace({ terminationGracePeriodSeconds: 60 })).toBe(60);
    expect(() => chart.render({ terminationGracePeriodSeconds: 30 })).toThrow(/must exceed node.drainTimeout/);
  });

  it("runs as the image's node user with a read-only root and writable volumes", () => {
    const spec = broker(chart.render()).spec.template.spec;
    expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, fsGroup: 1000 });
    const c = spec.containers[0];
    expect(c.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    const mounts = Object.fromEntries(
      c.volumeMounts.map((m: { name: string; mountPath: string }) => [m.mountPath, m.name]),
    );
    expect(mounts).toMatchObject({ "/opt/svc/data": "data", "/opt/svc/log": "log", "/tmp": "tmp" });
    expect(spec.volumes).toContainEqual({ name: "data", emptyDir: {} });
  });

  it("soft anti-affinity by default, hard or none on request, a PodDisruptionBudget", () => {
    const aff = (v: object) => broker(chart.render(v)).spec.template.spec.affinity;
    expect(aff({}).podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution).toHaveLength(1);
    expect(
      aff({ podAntiAffinity: "hard" }).podAntiAffinity.requiredDuringSchedulingIgnoredDuringExecution,
    ).toHaveLength(1);
    expect(aff({ podAntiAffinity: "none" })).toBeUndefined();
    const objs = chart.render();
    const pdb = find(objs, "PodDisruptionBudget", "svc");
    expect(pdb.spec.maxUnavailable).toBe(1);
    expect(pdb.spec.selector.matchLabels).toEqual(broker(objs).spec.selector.matchLabels);
    const etcdPdb = find(objs, "PodDisruptionBudget", "svc-etcd");
    expect(etcdPdb.spec.maxUnavailable).toBe(1);
    expect(etcdPdb.spec.selector.matchLabels).toEqual(find(objs, "StatefulSet", "svc-etcd").spec.selector.matchLabels);
    expect(
      chart.render({ podDisruptionBudget: { enabled: false } }).some((o) => o.kind === "PodDisruptionBudget"),
    ).toBe(false);
  });
});
