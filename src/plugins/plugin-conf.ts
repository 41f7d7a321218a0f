// Per-plugin configuration files, as the family keeps them: `<plugins.etc_dir>/<plugin>.conf`, in
// svc.conf's `key = value` format (the same parser), checked against the plugin's own small schema.
// Keys may hold `$n` (a positive integer) for numbered groups, e.g. `auth.client.$n.clientid` for
// `auth.client.1.clientid`, and `$name` (letters, digits, `_`, `-`) for a free-named key, e.g.
// `auth.jwt.verify_claims.$name` for `auth.jwt.verify_claims.sub`. Every problem is reported at
// once as a ConfigError naming file:line. A missing file is an empty configuration.

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { parseConfFile } from "../config/conf-file.ts";
import { ConfigError } from "../config/config-error.ts";
import { parseEntry } from "../config/parse-entry.ts";
import type { AnyConfigValue, SchemaEntry } from "../config/schema-types.ts";

export type PluginConfSchema = Readonly<Record<string, SchemaEntry>>;

export interface PluginConfValue {
  key: string;
  value: AnyConfigValue;
  /** `<file>:<line>`. */
  origin: string;
}

export interface PluginConfGroup {
  n: number;
  /** Where the group's first key was set. */
  origin: string;
  fields: Record<string, PluginConfValue>;
}

export interface PluginConf {
  /** The file read, or undefined when there is none. */
  readonly file: string | undefined;
  /** Every key set, by concrete key (later lines win). */
  readonly values: ReadonlyMap<string, PluginConfValue>;
  /** The value of a key without `$n` (its default when unset). */
  get(key: string): AnyConfigValue;
  /** The numbered groups under `prefix` (`auth.client` -> `auth.client.<n>.<field>`), by n. */
  groups(prefix: string): PluginConfGroup[];
}

export interface LoadPluginConfOptions {
  /** Directory relative paths resolve against (default: the working directory). */
  cwd?: string;
  /** An extra word for an unknown key (e.g. that a setting belongs in svc.conf). */
  hint?: (key: string) => string | undefined;
}

/** The path of a plugin's configuration file. */
export function pluginConfPath(dir: string, plugin: string): string {
  return join(dir, `${plugin}.conf`);
}

function segMatch(p: string, seg: string): boolean {
  if (p === "$n") return /^[0-9]+$/.test(seg);
  if (p === "$name") return /^[A-Za-z0-9_-]+$/.test(seg);
  return p === seg;
}

function patternOf(key: string, schema: PluginConfSchema): string | undefined {
  if (Object.hasOwn(schema, key)) return key;
  const segs = key.split(".");
  for (const pattern of Object.keys(schema)) {
    const ps = pattern.split(".");
    if (ps.length === segs.length && ps.every((p, i) => segMatch(p, segs[i]))) return pattern;
  }
  return undefined;
}

/** Reads and validates `<dir>/<plugin>.conf`; throws ConfigError listing every problem. */
export function loadPluginConf(
  dir: string,
  plugin: string,
  schema: PluginConfSchema,
  opts: LoadPluginConfOptions = {},
): PluginConf {
  const path = pluginConfPath(dir, plugin);
  let text: string | undefined;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ConfigError(`${path}: cannot read the plugin configuration: ${reason}`, { cause: err });
    }
  }
  const values = new Map<string, PluginConfValue>();
  if (text !== undefined) {
    const parsed = parseConfFile(text, path);
    const issues = [...parsed.issues];
    for (const a of parsed.assignments) {
      const pattern = patternOf(a.key, schema);
      if (pattern === undefined) {
        const hint = opts.hint?.(a.key);
        const known = Object.keys(schema).join(", ");
        issues.push(`${a.origin}: unknown key ${a.key} for ${plugin} (known: ${known})${hint ? `; ${hint}` : ""}`);
        continue;
      }
      const r = parseEntry(schema[pattern], a.raw, opts.cwd ?? process.cwd());
      if (!r.ok) issues.push(`${a.origin}: ${a.key}: ${r.error}`);
      else values.set(a.key, { key: a.key, value: r.value, origin: a.origin });
    }
    if (issues.length > 0) throw new ConfigError(issues);
  }
  return {
    file: text === undefined ? undefined : path,
    values,
    get(key) {
      const v = values.get(key);
      if (v !== undefined) return v.value;
      const d = schema[key]?.default;
      if (d === undefined) return undefined;
      const r = parseEntry(schema[key], d, opts.cwd ?? process.cwd());
      return r.ok ? r.value : undefined;
    },
    groups(prefix) {
      const byN = new Map<number, PluginConfGroup>();
      for (const v of values.values()) {
        if (!v.key.startsWith(`${prefix}.`)) continue;
        const rest = v.key.slice(prefix.length + 1).split(".");
        if (rest.length !== 2 || !/^[0-9]+$/.test(rest[0])) continue;
        const n = Number(rest[0]);
        let g = byN.get(n);
        if (g === undefined) byN.set(n, (g = { n, origin: v.origin, fields: {} }));
        g.fields[rest[1]] = v;
      }
      return [...byN.values()].sort((a, b) => a.n - b.n);
    },
  };
}
