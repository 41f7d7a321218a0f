// Generates manifests/ from charts/svc: the kustomize base is the chart rendered with its default
// values (release svc, namespace default), one file per template, except the Secret, which a
// secretGenerator makes from secret.env (random values are not committed); the cluster-3 overlay
// patches what differs in the render with replicaCount 3 and 3 etcd members.
// Run: node --experimental-transform-types test/k8s/manifests-gen.ts

import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { stringify } from "yaml";
import { ChartRenderer, find, parseObjects, ROOT } from "./render.ts";

export const MANIFESTS = join(ROOT, "manifests");
export const CLUSTER3_VALUES = { replicaCount: 3, etcd: { replicas: 3 } };
const GENERATED = "# Generated from charts/svc by test/k8s/manifests-gen.ts: do not edit, regenerate.\n";

/** The rendered text cut at its `# Source:` lines: template file name -> its objects' YAML. */
function byTemplate(text: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of text.split(/^---\n# Source: [^/\n]+\/templates\//m).slice(1)) {
    const nl = part.indexOf("\n");
    const file = part.slice(0, nl);
    out.set(file, (out.has(file) ? `${out.get(file)}\n---\n` : "") + part.slice(nl + 1).trimEnd());
  }
  return out;
}

const yaml = (o: unknown): string => stringify(o, { lineWidth: 0 });

/** Every file of manifests/, by path relative to it. */
export function manifestFiles(chart: ChartRenderer): Map<string, string> {
  const files = new Map<string, string>();
  const text = chart.text();
  const secret = find(parseObjects(text), "Secret");
  const resources: string[] = [];
  for (const [file, body] of byTemplate(text)) {
    if (file === "secret.yaml") continue;
    files.set(`base/${file}`, `${GENERATED}${body}\n`);
    resources.push(file);
  }
  const kustomization = {
    apiVersion: "kustomize.config.k8s.io/v1beta1",
    kind: "Kustomization",
    resources,
    secretGenerator: [
      {
        name: secret.metadata.name,
        namespace: secret.metadata.namespace,
        envs: ["secret.env"],
        options: { disableNameSuffixHash: true, labels: secret.metadata.labels },
      },
    ],
  };
  files.set(
    "base/kustomization.yaml",
    `${GENERATED}# The chart's default values (release svc, namespace default). The Secret comes from
# secret.env, which is not committed: create it before rendering, e.g.
#   for k in node-cookie api-secret dashboard-password; do echo "$k=$(openssl rand -hex 24)"; done \\
#     > manifests/base/secret.env
${yaml(kustomization)}`,
  );
  files.set("base/.gitignore", "secret.env\n");

  // JSON patches (not strategic merges, which would move the patched env entry to the front).
  const three = chart.render(CLUSTER3_VALUES);
  const etcd = find(three, "StatefulSet", "svc-etcd");
  const svc = find(three, "StatefulSet", "svc");
  const env: { name: string; value?: string }[] = svc.spec.template.spec.containers[0].env;
  const at = env.findIndex((e) => e.name === "SVC_CLUSTER__ETCD__SERVER");
  const container = "/spec/template/spec/containers/0";
  const patches = [
    {
      target: { group: "apps", version: "v1", kind: "StatefulSet", name: etcd.metadata.name },
      patch: yaml([
        { op: "replace", path: "/spec/replicas", value: etcd.spec.replicas },
        { op: "test", path: `${container}/name`, value: "etcd" },
        { op: "replace", path: `${container}/args`, value: etcd.spec.template.spec.containers[0].args },
      ]),
    },
    {
      target: { group: "apps", version: "v1", kind: "StatefulSet", name: svc.metadata.name },
      patch: yaml([
        { op: "replace", path: "/spec/replicas", value: svc.spec.replicas },
        { op: "test", path: `${container}/env/${at}/name`, value: env[at].name },
        { op: "replace", path: `${container}/env/${at}/value`, value: env[at].value },
      ]),
    },
  ];
  files.set(
    "overlays/cluster-3/kustomization.yaml",
    `${GENERATED}# 3 broker pods and a bundled etcd of 3 members (the chart with replicaCount=3, etcd.replicas=3).
${yaml({ apiVersion: "kustomize.config.k8s.io/v1beta1", kind: "Kustomization", resources: ["../../base"], patches })}`,
  );
  return files;
}

if (import.meta.main) {
  const chart = new ChartRenderer();
  try {
    for (const [path, text] of manifestFiles(chart)) {
      const file = join(MANIFESTS, path);
      mkdirSync(dirname(file), { recursive: true });
      writeFileSync(file, text);
      console.log(`wrote manifests/${path}`);
    }
  } finally {
    chart.dispose();
  }
}
