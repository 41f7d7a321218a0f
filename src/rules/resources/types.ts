// Resource types and their running instances. A resource type (code or a plugin supplies it)
// declares its config parameters and makes instances; an instance is what an action bound to the
// resource uses (the web hook's HTTP pool) and answers a health check.

import type { ParamSpec } from "../engine/records.ts";

export interface ResourceInstance {
  readonly id: string;
  readonly type: string;
  /** Connects / checks once; resolves to the liveness found. */
  healthCheck(): Promise<boolean>;
  stop(): Promise<void>;
  /** The resource was deleted (called after stop): drops what the instance kept, such as a cache on disk. */
  discard?(): void;
}

export interface ResourceTypeDef {
  readonly name: string;
  readonly provider: string;
  readonly title: string;
  readonly description: string;
  readonly params: Readonly<Record<string, ParamSpec>>;
  /** A problem with a config beyond the descriptors (e.g. a URL that does not parse), or null. */
  validate(config: Record<string, unknown>): string | null;
  create(id: string, config: Record<string, unknown>): ResourceInstance;
}
