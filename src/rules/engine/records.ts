// What the rule engine keeps in the cluster store (`rules/<id>`, `resources/<id>`, JSON): the
// API's rule and resource as created (emqx-facts §2), so every node builds the same runtime from
// them and they survive restarts. Metrics and liveness are per node and never stored.

export type OnActionFailed = "continue" | "stop";

export interface StoredAction {
  /** Instance id: `<action name>_<ns timestamp>`. */
  id: string;
  name: string;
  /** Parameters as given; bound to a resource they carry `$resource`. */
  params: Record<string, unknown>;
  /** Run when this action fails. */
  fallbacks: StoredAction[];
}

export interface StoredRule {
  id: string;
  /** First body variant only. */
  name?: string;
  rawsql: string;
  actions: StoredAction[];
  description: string;
  enabled: boolean;
  on_action_failed: OnActionFailed;
  /** Milliseconds since the epoch. */
  created_at: number;
}

export interface StoredResource {
  id: string;
  name?: string;
  type: string;
  config: Record<string, unknown>;
  description: string;
  created_at: number;
}

/** A parameter descriptor of an action or resource type (`/actions`, `/resource_types`). */
export interface ParamSpec {
  type: "string" | "number" | "boolean" | "object" | "array";
  required: boolean;
  default?: unknown;
  enum?: unknown[];
  format?: string;
  order?: number;
  input?: string;
  title: string;
  description: string;
  schema?: Record<string, unknown>;
}

/** An optional parameter's descriptor. */
export const optionalParam = (
  type: ParamSpec["type"],
  title: string,
  description: string,
  extra: Partial<ParamSpec> = {},
): ParamSpec => ({ type, required: false, title, description, ...extra });

/** Checks `params` against descriptors: the first problem in words, or null. */
export function checkParams(
  specs: Readonly<Record<string, ParamSpec>>,
  params: Record<string, unknown>,
): string | null {
  for (const [name, s] of Object.entries(specs)) {
    const v = params[name];
    if (v === undefined || v === null) {
      if (s.required) return `Required param ${name} is missing`;
      continue;
    }
    const ok =
      s.type === "array"
        ? Array.isArray(v)
        : s.type === "object"
          ? typeof v === "object" && !Array.isArray(v)
          : s.type === "number"
            ? typeof v === "number" || (typeof v === "string" && v.includes("${"))
            : s.type === "boolean"
              ? typeof v === "boolean" || (typeof v === "string" && v.includes("${"))
              : typeof v === "string";
    if (!ok) return `Param ${name} must be of type ${s.type}`;
    if (s.enum !== undefined && !s.enum.includes(v)) return `Param ${name} must be one of ${s.enum.join(", ")}`;
  }
  return null;
}

/** Fills the defaults of absent parameters. */
export function withDefaults(
  specs: Readonly<Record<string, ParamSpec>>,
  params: Record<string, unknown>,
): Record<string, unknown> {
  const out = { ...params };
  for (const [name, s] of Object.entries(specs))
    if ((out[name] === undefined || out[name] === null) && s.default !== undefined) out[name] = s.default;
  return out;
}
