// One `key = value` setting from one layer (file, environment, command line), with where it came
// from for the `/configs` API and for error messages.

import type { ConfigSource } from "./config-types.ts";

export interface Assignment {
  readonly key: string;
  /** The text as written; "" from the environment resets the key to its default. */
  readonly raw: string;
  readonly source: ConfigSource;
  /** Prefix of error messages: `etc/svc.conf:42`, `environment SVC_NODE__NAME`, `command line`. */
  readonly origin: string;
  /** How to write a suggested key in this layer (environment variables are spelt differently). */
  readonly spell?: (key: string) => string;
}

/** CLI flags (and `Config.with`): values may be given as numbers or booleans for convenience. */
export function cliAssignments(overrides: Readonly<Record<string, string | number | boolean>>): Assignment[] {
  return Object.entries(overrides).map(([key, value]) => ({
    key,
    raw: String(value),
    source: "cli",
    origin: "command line",
  }));
}
