// SVC_ environment variables: `SVC_` + the key upper-cased with `.` written as `__`
// (`SVC_LISTENER__TCP__EXTERNAL=127.0.0.1:21883` sets `listener.tcp.external`). Any other SVC_
// variable is an error, except the few the project uses for something other than a key.

import type { Assignment } from "./assignment.ts";

export const ENV_PREFIX = "SVC_";

/** SVC_ variables that are not configuration keys, and what they are for. */
export const NON_KEY_ENV_VARS: Readonly<Record<string, string>> = {
  SVC_CONFIG: "path of the configuration file to load instead of etc/svc.conf",
  SVC_LOG_FORMAT: "log output format, read by the logger",
  SVC_MALLOC_TUNING: "off: `svc start` leaves the C allocator's settings alone (see src/malloc-tuning.ts)",
};

/** `listener.tcp.external` -> `SVC_LISTENER__TCP__EXTERNAL`. */
export const envName = (key: string): string => ENV_PREFIX + key.toUpperCase().replaceAll(".", "__");

/** `SVC_LISTENER__TCP__EXTERNAL` -> `listener.tcp.external`. */
export const keyOfEnvName = (name: string): string => name.slice(ENV_PREFIX.length).toLowerCase().replaceAll("__", ".");

/** The assignments of every SVC_ variable, in name order (undefined values are skipped). */
export function envAssignments(env: Readonly<Record<string, string | undefined>>): Assignment[] {
  return Object.keys(env)
    .filter((name) => name.startsWith(ENV_PREFIX) && !(name in NON_KEY_ENV_VARS) && env[name] !== undefined)
    .sort()
    .map((name) => ({
      key: keyOfEnvName(name),
      raw: env[name] ?? "",
      source: "env",
      origin: `environment ${name}`,
      spell: envName,
    }));
}
