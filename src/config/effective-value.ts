// The value a key has once every layer is applied: its own setting, else the default for its
// zone or listener kind, else the global key it falls back to, else the schema default.

import { ConfigError } from "./config-error.ts";
import type { ConfigSource } from "./config-types.ts";
import { defaultText, matchKey } from "./key-match.ts";
import { parseEntry } from "./parse-entry.ts";
import type { AnyConfigValue } from "./schema-types.ts";

/** A key's validated setting from a layer. */
export interface Setting {
  readonly value: AnyConfigValue;
  readonly raw: string;
  readonly source: ConfigSource;
  /** Where it was set, for messages: `etc/svc.conf:42`, `environment SVC_X`, `command line`. */
  readonly origin: string;
}

export interface Effective {
  readonly value: AnyConfigValue;
  readonly raw: string | undefined;
  readonly source: ConfigSource;
  readonly origin?: string;
  readonly inheritedFrom?: string;
}

const UNSET: Effective = { value: undefined, raw: undefined, source: "default" };

/**
 * Looks `key` up in `settings`; `defaults` caches parsed defaults (they depend on `cwd` only
 * through relative paths). Throws ConfigError for a key the schema does not know.
 */
export function effectiveValue(
  settings: ReadonlyMap<string, Setting>,
  key: string,
  cwd: string,
  defaults: Map<string, Effective>,
): Effective {
  const own = settings.get(key);
  if (own !== undefined) return own;
  const cached = defaults.get(key);
  if (cached !== undefined) return cached;
  const m = matchKey(key);
  if (m === undefined) throw new ConfigError(`unknown key "${key}"`);
  let result = UNSET;
  const text = defaultText(m);
  if (text !== undefined) {
    const parsed = parseEntry(m.entry, text, cwd);
    if (!parsed.ok) throw new Error(`schema default of ${m.schemaKey} is invalid: ${parsed.error}`);
    result = { value: parsed.value, raw: text, source: "default" };
  } else if (m.entry.fallback !== undefined) {
    // Not cached: the global key may be set differently in each Config.
    return { ...effectiveValue(settings, m.entry.fallback, cwd, defaults), inheritedFrom: m.entry.fallback };
  }
  defaults.set(key, result);
  return result;
}
