// Finds the schema entry for a concrete key (`zone.external.max_inflight` ->
// `zone.$zone.max_inflight`, zone "external"), and suggests the nearest known key for a typo.

import { SCHEMA, type SchemaKey } from "./schema.ts";
import { LISTENER_KINDS, type ListenerKind, type SchemaEntry } from "./schema-types.ts";

export interface KeyMatch {
  readonly key: string;
  readonly schemaKey: SchemaKey;
  readonly entry: SchemaEntry;
  /** Placeholder values by name without `$`: `{ zone: "external" }`, `{ kind: "tcp", name: "a" }`. */
  readonly params: Readonly<Record<string, string>>;
}

const NAME = /^[A-Za-z0-9_-]+$/;
const ENTRIES: ReadonlyMap<string, SchemaEntry> = new Map(Object.entries(SCHEMA));
const PATTERNS: readonly (readonly [SchemaKey, string[]])[] = (Object.keys(SCHEMA) as SchemaKey[])
  .filter((k) => k.includes("$"))
  .map((k) => [k, k.split(".")] as const);

export const isListenerKind = (s: string): s is ListenerKind => (LISTENER_KINDS as readonly string[]).includes(s);

function matchSegments(segments: readonly string[], pattern: readonly string[]): Record<string, string> | undefined {
  if (segments.length !== pattern.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < pattern.length; i++) {
    const p = pattern[i];
    const s = segments[i];
    if (!p.startsWith("$")) {
      if (p !== s) return undefined;
    } else if (p === "$kind" ? !isListenerKind(s) : !NAME.test(s)) {
      return undefined;
    } else {
      params[p.slice(1)] = s;
    }
  }
  return params;
}

/** The entry describing `key`, or undefined for an unknown key. Exact keys win over patterns. */
export function matchKey(key: string): KeyMatch | undefined {
  const exact = ENTRIES.get(key);
  if (exact !== undefined) {
    // An exact key that also fits a pattern (listener.tcp.external) still has its placeholders.
    const params = PATTERNS.map(([, p]) => matchSegments(key.split("."), p)).find((x) => x !== undefined) ?? {};
    return { key, schemaKey: key as SchemaKey, entry: exact, params };
  }
  const segments = key.split(".");
  for (const [schemaKey, pattern] of PATTERNS) {
    const params = matchSegments(segments, pattern);
    if (params !== undefined) return { key, schemaKey, entry: SCHEMA[schemaKey], params };
  }
  return undefined;
}

/** The default text for a matched key: the one for its first placeholder value, else the plain one. */
export function defaultText(m: KeyMatch): string | undefined {
  const first = Object.values(m.params)[0];
  return (first !== undefined ? m.entry.defaultFor?.[first] : undefined) ?? m.entry.default;
}

function distance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    }
    prev = cur;
  }
  return prev[b.length];
}

/** Known keys shaped like `key`: exact keys, and patterns filled with key's own segments. */
function candidates(key: string): string[] {
  const segments = key.split(".");
  const out = [...ENTRIES.keys()].filter((k) => !k.includes("$"));
  for (const [, pattern] of PATTERNS) {
    if (pattern.length !== segments.length) continue;
    let filled = [""];
    pattern.forEach((p, i) => {
      const options =
        p === "$kind"
          ? isListenerKind(segments[i])
            ? [segments[i]]
            : [...LISTENER_KINDS]
          : [p.startsWith("$") ? segments[i] : p];
      filled = filled.flatMap((f) => options.map((o) => (i === 0 ? o : `${f}.${o}`)));
    });
    out.push(...filled);
  }
  return out;
}

/** The nearest known key when it is close enough to be a likely typo. */
export function suggestKey(key: string): string | undefined {
  const limit = Math.max(1, Math.min(3, Math.floor(key.length / 5)));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const c of candidates(key)) {
    const d = distance(key.toLowerCase(), c);
    if (d < bestDistance && c !== key && matchKey(c) !== undefined) {
      best = c;
      bestDistance = d;
    }
  }
  return best;
}
