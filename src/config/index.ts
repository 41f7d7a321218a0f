// Public surface of the configuration subsystem.

export { Config } from "./config.ts";
export { ConfigError } from "./config-error.ts";
export type { ConfigEntry, ConfigKey, ConfigSource, ConfigValue, ListenerConfig, ZoneConfig } from "./config-types.ts";
export { envName, NON_KEY_ENV_VARS } from "./env-overrides.ts";
export { type LoadOptions, loadConfig } from "./loader.ts";
export { SCHEMA, type SchemaKey } from "./schema.ts";
export { type AnyConfigValue, LISTENER_KINDS, type ListenerKind, type SchemaEntry } from "./schema-types.ts";
export type { Bind } from "./values.ts";
