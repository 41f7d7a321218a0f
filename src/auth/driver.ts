// Back-end drivers (pg, mysql2, ioredis, mongodb, ldapts) are loaded when a provider first opens
// its connections, never at start: a node that does not use a provider does not carry its driver
// (each costs start time and memory: about 50 MB of RSS for the five).

import { createRequire } from "node:module";

const load = createRequire(import.meta.url);

/** The driver module `name` (loaded once, then from the module cache). */
export function driver<T>(name: string): T {
  return load(name) as T;
}
