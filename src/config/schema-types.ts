// The shape of a schema entry and the value type each entry type parses to. The schema itself
// (schema.ts) is one `as const` object of these entries; config-types.ts maps keys to values.

import type { Bind } from "./values.ts";

export const LISTENER_KINDS = ["tcp", "ssl", "ws", "wss"] as const;
export type ListenerKind = (typeof LISTENER_KINDS)[number];

/** What the text of a key parses to (see values.ts). Durations are milliseconds, sizes bytes. */
export interface ValueTypes {
  /** Bare integer = milliseconds. */
  duration: number;
  /** Bare integer = seconds; the value is still milliseconds. */
  duration_s: number;
  size: number;
  boolean: boolean;
  integer: number;
  float: number;
  string: string;
  /** Zone or listener name: letters, digits, `_`, `-`. */
  name: string;
  /** `<name>@<host>`. */
  node_name: string;
  enum: string;
  bind: Bind;
  /** A bind, or `off` = null (disabled). */
  bind_or_off: Bind | null;
  list: string[];
  /** Absolute path (relative text is resolved against the working directory); may not exist. */
  path: string;
  /** Absolute path of a file that must exist at load. */
  file: string;
  /** Absolute HTTP path, `/mqtt`. */
  http_path: string;
}
export type ValueType = keyof ValueTypes;

/** How each item of a `list` is checked. */
export type ListItem = "string" | "node_name" | "http_url";

export interface SchemaEntry {
  readonly type: ValueType;
  /** One sentence for svc.conf and the `/configs` API. */
  readonly description: string;
  /** Default as the text an operator would write; absent = unset (undefined) unless `fallback`. */
  readonly default?: string;
  /** Defaults that replace `default` for one value of the key's first placeholder
   *  (a zone name for `zone.$zone.*`, a listener kind for `listener.$kind.*`). */
  readonly defaultFor?: Readonly<Record<string, string>>;
  /** When unset (and no `defaultFor` applies), the value of this global key. Same type. */
  readonly fallback?: string;
  /** Allowed values of an `enum`, or of each item of a `list`. */
  readonly values?: readonly string[];
  readonly item?: ListItem;
  readonly min?: number;
  readonly max?: number;
  /** Rejects the empty string (`string`) or the empty list (`list`). */
  readonly nonEmpty?: boolean;
  /** Listener options: the listener kinds the option applies to (all when absent). */
  readonly only?: readonly ListenerKind[];
  /** Hidden by APIs that list the configuration. */
  readonly secret?: boolean;
}

type BaseValue<E extends SchemaEntry> = E extends { type: "enum"; values: readonly (infer V)[] }
  ? V
  : E extends { type: "list"; values: readonly (infer V)[] }
    ? V[]
    : ValueTypes[E["type"]];

/** The value type of one entry: optional (undefined) unless it has a default or a fallback. */
export type EntryValue<E extends SchemaEntry> = E extends { default: string } | { fallback: string }
  ? BaseValue<E>
  : BaseValue<E> | undefined;

/** Every value a key can hold (for code that walks all keys, such as `Config.entries()`). */
export type AnyConfigValue = ValueTypes[ValueType] | undefined;
