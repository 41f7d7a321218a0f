// Builds the resolved record of one zone: every `zone.$zone.*` option of the schema, camelCased,
// with the zone's own value, else its zone default, else the global key it falls back to.

import { ConfigError } from "./config-error.ts";
import type { ZoneConfig } from "./config-types.ts";
import { SCHEMA } from "./schema.ts";
import type { AnyConfigValue } from "./schema-types.ts";

const PREFIX = "zone.$zone.";

/** Option names (`max_inflight`) of the schema's zone keys, in schema order. */
export const ZONE_OPTIONS: readonly string[] = Object.keys(SCHEMA)
  .filter((k) => k.startsWith(PREFIX))
  .map((k) => k.slice(PREFIX.length));

const camel = (s: string): string => s.replace(/_([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function buildZone(name: string, value: (key: string) => AnyConfigValue): ZoneConfig {
  if (!/^[A-Za-z0-9_-]+$/.test(name)) throw new ConfigError(`invalid zone name ${JSON.stringify(name)}`);
  const zone: Record<string, AnyConfigValue> = { name };
  for (const opt of ZONE_OPTIONS) zone[camel(opt)] = value(`zone.${name}.${opt}`);
  // The record is built from the same schema keys the ZoneConfig type is derived from.
  return Object.freeze(zone) as unknown as ZoneConfig;
}
