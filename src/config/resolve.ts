// Validates every assignment of every layer at once, later layers overriding earlier ones, then
// checks what no single key can: listener options need their listener, two listeners may not
// share a port, static discovery needs seeds, a Kubernetes API server is a URL. Collects all
// problems into one ConfigError.

import type { Assignment } from "./assignment.ts";
import { ConfigError } from "./config-error.ts";
import { type Effective, effectiveValue, type Setting } from "./effective-value.ts";
import { matchKey, suggestKey } from "./key-match.ts";
import { parseEntry } from "./parse-entry.ts";
import { SCHEMA } from "./schema.ts";
import type { SchemaEntry } from "./schema-types.ts";
import type { Bind } from "./values.ts";

/** Keys holding a bind: every exact one of the schema plus the listeners the layers define. */
export function bindKeys(settings: ReadonlyMap<string, Setting>): string[] {
  const exact = Object.entries<SchemaEntry>(SCHEMA)
    .filter(([k, e]) => !k.includes("$") && (e.type === "bind" || e.type === "bind_or_off"))
    .map(([k]) => k);
  const defined = [...settings.keys()].filter(
    (k) => !exact.includes(k) && matchKey(k)?.schemaKey === "listener.$kind.$name",
  );
  return [...exact, ...defined];
}

interface Applied {
  readonly settings: Map<string, Setting>;
  /** Every known key some layer assigned, valid or not (to avoid follow-on errors). */
  readonly assigned: Set<string>;
  /** Keys whose last assignment did not parse. */
  readonly failed: Set<string>;
}

function applyAll(assignments: readonly Assignment[], cwd: string, issues: string[]): Applied {
  const settings = new Map<string, Setting>();
  const assigned = new Set<string>();
  const failed = new Set<string>();
  for (const a of assignments) {
    const m = matchKey(a.key);
    if (m === undefined) {
      const near = suggestKey(a.key);
      const hint = near === undefined ? "" : ` (did you mean ${(a.spell ?? String)(near)}?)`;
      issues.push(`${a.origin}: unknown key "${a.key}"${hint}`);
      continue;
    }
    const { only } = m.entry;
    if (only !== undefined && !only.some((k) => k === m.params.kind)) {
      issues.push(`${a.origin}: ${a.key}: applies to ${only.join(", ")} listeners only`);
      continue;
    }
    assigned.add(a.key);
    settings.delete(a.key);
    failed.delete(a.key);
    if (a.source === "env" && a.raw === "") continue;
    const parsed = parseEntry(m.entry, a.raw, cwd);
    if (parsed.ok) {
      settings.set(a.key, { value: parsed.value, raw: a.raw, source: a.source, origin: a.origin });
    } else {
      issues.push(`${a.origin}: ${a.key}: ${parsed.error}`);
      failed.add(a.key);
    }
  }
  return { settings, assigned, failed };
}

const where = (s: Effective, key: string): string => (s.origin === undefined ? key : `${s.origin}: ${key}`);

function clash(a: Bind, b: Bind): boolean {
  if (a.port === 0 || a.port !== b.port) return false;
  const v6 = (h: string): boolean => h.includes(":");
  if (a.host === b.host || a.host === "::" || b.host === "::") return true;
  return (a.host === "0.0.0.0" && !v6(b.host)) || (b.host === "0.0.0.0" && !v6(a.host));
}

function crossCheck({ settings, assigned, failed }: Applied, cwd: string, issues: string[]): void {
  const defaults = new Map<string, Effective>();
  const value = (key: string): Effective => effectiveValue(settings, key, cwd, defaults);
  for (const [key, s] of settings) {
    const m = matchKey(key);
    if (m?.schemaKey.startsWith("listener.$kind.$name.") !== true) continue;
    const base = `listener.${m.params.kind}.${m.params.name}`;
    if (!(base in SCHEMA) && !assigned.has(base)) {
      issues.push(`${where(s, key)}: no listener ${base} is defined`);
    }
  }
  const binds: [string, Bind][] = [];
  for (const key of bindKeys(settings)) {
    if (failed.has(key)) continue; // its own error is already reported
    const b = value(key).value as Bind | null | undefined;
    if (b == null) continue;
    const taken = binds.find(([, other]) => clash(b, other));
    if (taken !== undefined) issues.push(`${where(value(key), key)}: port ${b.port} is already used by ${taken[0]}`);
    binds.push([key, b]);
  }
  const apiserver = value("cluster.k8s.apiserver");
  if (typeof apiserver.value === "string" && apiserver.value !== "" && !isHttpUrl(apiserver.value)) {
    issues.push(`${where(apiserver, "cluster.k8s.apiserver")}: not an http(s) URL: ${apiserver.value}`);
  }
  const etcdKey = value("cluster.etcd.ssl.keyfile");
  const etcdCert = value("cluster.etcd.ssl.certfile");
  if ((etcdKey.value === undefined) !== (etcdCert.value === undefined)) {
    const given = etcdKey.value === undefined ? etcdCert : etcdKey;
    const name = etcdKey.value === undefined ? "cluster.etcd.ssl.certfile" : "cluster.etcd.ssl.keyfile";
    issues.push(`${where(given, name)}: cluster.etcd.ssl.keyfile and cluster.etcd.ssl.certfile go together`);
  }
  const seeds = value("cluster.static.seeds").value as string[];
  if (value("cluster.discovery").value === "static" && seeds.length === 0) {
    issues.push(
      `${where(value("cluster.discovery"), "cluster.discovery")}: static discovery needs cluster.static.seeds`,
    );
  }
}

function isHttpUrl(text: string): boolean {
  try {
    const u = new URL(text);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

/** The validated settings of all layers (in order); throws ConfigError listing every problem. */
export function resolveAssignments(
  assignments: readonly Assignment[],
  cwd: string,
  earlierIssues: readonly string[] = [],
): Map<string, Setting> {
  const issues = [...earlierIssues];
  const applied = applyAll(assignments, cwd, issues);
  crossCheck(applied, cwd, issues);
  if (issues.length > 0) throw new ConfigError(issues);
  return applied.settings;
}
