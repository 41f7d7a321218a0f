// The validated configuration of one node: typed key lookup, resolved zones and listeners, and a
// listing of every key with its value and source. Immutable; `with()` derives a modified copy.
// Built by loadConfig (loader.ts); nothing here reads process.env or the configuration file.

import { type Assignment, cliAssignments } from "./assignment.ts";
import type { ConfigEntry, ConfigKey, ConfigValue, ListenerConfig, ZoneConfig } from "./config-types.ts";
import { type Effective, effectiveValue, type Setting } from "./effective-value.ts";
import { matchKey } from "./key-match.ts";
import { buildListener, listenerKeys } from "./listener-config.ts";
import { resolveAssignments } from "./resolve.ts";
import { SCHEMA } from "./schema.ts";
import { buildZone, ZONE_OPTIONS } from "./zone-config.ts";

const BUILT_IN_ZONES = ["external", "internal"];

export class Config {
  readonly #layers: readonly Assignment[];
  readonly #cwd: string;
  readonly #settings: ReadonlyMap<string, Setting>;
  readonly #defaults = new Map<string, Effective>();
  readonly #zones = new Map<string, ZoneConfig>();

  /**
   * Validates the layers (file, environment, CLI, in order of precedence) and throws ConfigError
   * listing every problem. Use `loadConfig` rather than calling this directly.
   * @param cwd directory that relative paths are resolved against
   * @param issues problems found before validation (file syntax), reported together
   */
  constructor(layers: readonly Assignment[], cwd: string, issues: readonly string[] = []) {
    this.#layers = layers;
    this.#cwd = cwd;
    this.#settings = resolveAssignments(layers, cwd, issues);
  }

  /** The value of a key (durations in ms, sizes in bytes, paths absolute). */
  get<K extends ConfigKey>(key: K): ConfigValue<K> {
    return this.#lookup(key).value as ConfigValue<K>;
  }

  /** Every option of a zone with fallbacks applied; any zone name works (unset = defaults). */
  zone(name: string): ZoneConfig {
    let zone = this.#zones.get(name);
    if (zone === undefined) {
      zone = buildZone(name, (key) => this.#lookup(key).value);
      this.#zones.set(name, zone);
    }
    return zone;
  }

  /** The enabled MQTT listeners, ordered tcp, ssl, ws, wss, then by name. */
  listeners(): ListenerConfig[] {
    return listenerKeys(this.#settings.keys())
      .map((key) => buildListener(key, (k) => this.#lookup(k).value))
      .filter((l) => l !== undefined);
  }

  /**
   * Every key with its effective value and source, in schema order; zone options for every zone
   * in use (external, internal and any zone set or named by a listener), options of every listener.
   */
  entries(): ConfigEntry[] {
    const rows: ConfigEntry[] = [];
    const add = (key: string): void => {
      const m = matchKey(key);
      if (m === undefined) return;
      const { value, raw, source, inheritedFrom } = this.#lookup(key);
      const row = { key, value, raw, source, description: m.entry.description, secret: m.entry.secret === true };
      rows.push(inheritedFrom === undefined ? row : { ...row, inheritedFrom });
    };
    let zonesDone = false;
    let listenersDone = false;
    for (const key of Object.keys(SCHEMA)) {
      if (key.startsWith("zone.")) {
        if (!zonesDone) for (const z of this.#zoneNames()) for (const o of ZONE_OPTIONS) add(`zone.${z}.${o}`);
        zonesDone = true;
      } else if (key.startsWith("listener.")) {
        if (!listenersDone) for (const l of listenerKeys(this.#settings.keys())) this.#listenerRows(l, add);
        listenersDone = true;
      } else {
        add(key);
      }
    }
    return rows;
  }

  /** A copy with more settings applied on top (as CLI flags); validated like a load. */
  with(overrides: Readonly<Record<string, string | number | boolean>>): Config {
    return new Config([...this.#layers, ...cliAssignments(overrides)], this.#cwd);
  }

  #lookup(key: string): Effective {
    return effectiveValue(this.#settings, key, this.#cwd, this.#defaults);
  }

  #listenerRows(base: string, add: (key: string) => void): void {
    add(base);
    const kind = base.split(".")[1];
    for (const [key, entry] of Object.entries(SCHEMA)) {
      if (!key.startsWith("listener.$kind.$name.")) continue;
      const only: readonly string[] | undefined = "only" in entry ? entry.only : undefined;
      if (only === undefined || only.includes(kind)) add(`${base}.${key.slice("listener.$kind.$name.".length)}`);
    }
  }

  #zoneNames(): string[] {
    const names = new Set<string>();
    for (const key of this.#settings.keys()) if (key.startsWith("zone.")) names.add(key.split(".")[1]);
    for (const l of listenerKeys(this.#settings.keys())) names.add(String(this.#lookup(`${l}.zone`).value));
    const extra = [...names].filter((n) => !BUILT_IN_ZONES.includes(n)).sort();
    return [...BUILT_IN_ZONES, ...extra];
  }
}
