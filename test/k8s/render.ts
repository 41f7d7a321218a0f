// Renders charts/svc for the tests: with `helm template` when helm is on PATH, otherwise with the
// Go program in test/k8s/render (text/template + sprig + helm's own functions, the engine helm
// uses), built once per test file. Without either, the chart tests are skipped loudly, except
// under CI where they fail.

import { execFileSync, spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { parseAllDocuments } from "yaml";

export const ROOT = resolve(import.meta.dirname, "../..");
export const CHART = join(ROOT, "charts/svc");

/** One rendered Kubernetes object. */
export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; [k: string]: unknown };
  // biome-ignore lint/suspicious/noExplicitAny: rendered manifests are untyped until validated
  [k: string]: any;
}

export interface RenderOptions {
  name?: string;
  namespace?: string;
  /** Extra API versions the cluster offers (e.g. monitoring.coreos.com/v1). */
  apiVersions?: string[];
  /** Objects the chart's `lookup` finds in the cluster (Go renderer only, see `rendersLookup`). */
  lookup?: object[];
}

const onPath = (cmd: string, arg: string): boolean => spawnSync(cmd, [arg], { stdio: "ignore" }).status === 0;
const HAS_HELM = onPath("helm", "version");
const HAS_GO = onPath("go", "version");

/** Whether `lookup` can be given objects (helm template has no cluster to look in). */
export const rendersLookup = !HAS_HELM;
/** Whether the chart can be rendered here (helm or go). */
export const renderAvailable = HAS_HELM || HAS_GO;
if (!renderAvailable && !process.env.CI)
  console.warn("!!! neither helm nor go is on PATH: the chart is NOT rendered, its tests are skipped !!!");
/** Under CI a missing renderer fails: the describe runs and its renderer's constructor throws. */
export const chartDescribeEnabled = renderAvailable || Boolean(process.env.CI);

export class ChartRenderer {
  private readonly dir = mkdtempSync(join(tmpdir(), "svc-chart-"));
  private readonly bin = join(this.dir, "render");
  private n = 0;

  constructor() {
    if (!HAS_HELM) {
      if (!HAS_GO) throw new Error("neither helm nor go is on PATH: cannot render the chart (install golang-go)");
      execFileSync("go", ["build", "-o", this.bin, "./test/k8s/render"], {
        cwd: ROOT,
        env: { ...process.env, GO111MODULE: "off", GOPATH: "/usr/share/gocode" },
        stdio: ["ignore", "ignore", "pipe"],
      });
    }
  }

  private valuesFile(values: object | object[]): string {
    const file = join(this.dir, `values-${this.n++}.json`);
    writeFileSync(file, JSON.stringify(values));
    return file;
  }

  /** The rendered manifest text (throws with the renderer's message on a template error). */
  text(values: object = {}, opts: RenderOptions = {}): string {
    const name = opts.name ?? "svc";
    const ns = opts.namespace ?? "default";
    const file = this.valuesFile(values);
    const apis = opts.apiVersions ?? [];
    if (opts.lookup !== undefined && !rendersLookup) throw new Error("lookup objects need the Go renderer");
    try {
      if (HAS_HELM) {
        const args = ["template", name, CHART, "--namespace", ns, "-f", file];
        for (const a of apis) args.push("--api-versions", a);
        return execFileSync("helm", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
      }
      const args = ["-chart", CHART, "-name", name, "-namespace", ns, "-values", file];
      if (apis.length > 0) args.push("-api-versions", apis.join(","));
      if (opts.lookup !== undefined) args.push("-lookup", this.valuesFile(opts.lookup));
      return execFileSync(this.bin, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    } catch (err) {
      const stderr = (err as { stderr?: Buffer | string }).stderr?.toString() ?? "";
      throw new Error(`chart render failed: ${stderr.trim() || String(err)}`);
    }
  }

  /** The rendered objects. */
  render(values: object = {}, opts: RenderOptions = {}): K8sObject[] {
    return parseObjects(this.text(values, opts));
  }

  /** NOTES.txt as rendered for these values. */
  notes(values: object = {}, opts: RenderOptions = {}): string {
    const name = opts.name ?? "svc";
    const ns = opts.namespace ?? "default";
    const file = this.valuesFile(values);
    if (HAS_HELM) {
      const out = execFileSync("helm", ["install", name, CHART, "--dry-run=client", "-n", ns, "-f", file], {
        encoding: "utf8",
      });
      return out.slice(out.indexOf("NOTES:") + "NOTES:".length);
    }
    return execFileSync(this.bin, ["-chart", CHART, "-name", name, "-namespace", ns, "-values", file, "-notes"], {
      encoding: "utf8",
    });
  }

  dispose(): void {
    rmSync(this.dir, { recursive: true, force: true });
  }
}

/** Parses a multi-document YAML stream into objects (empty documents dropped). */
export function parseObjects(text: string): K8sObject[] {
  const out: K8sObject[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`bad YAML: ${doc.errors[0].message}`);
    const obj = doc.toJS() as K8sObject | null;
    if (obj !== null && obj !== undefined) out.push(obj);
  }
  return out;
}

/** The one object of this kind (and name, when given); throws when absent. */
export function find(objs: K8sObject[], kind: string, name?: string): K8sObject {
  const found = objs.filter((o) => o.kind === kind && (name === undefined || o.metadata.name === name));
  if (found.length !== 1) throw new Error(`expected one ${kind}${name ? ` ${name}` : ""}, found ${found.length}`);
  return found[0];
}

export const kinds = (objs: K8sObject[]): string[] => objs.map((o) => `${o.kind}/${o.metadata.name}`).sort();
