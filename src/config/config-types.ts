// Types derived from the schema: which key strings exist (`ConfigKey`), what each holds
// (`ConfigValue<K>`), the resolved zone and listener records, and the rows of `Config.entries()`.

import type { Schema, SchemaKey } from "./schema.ts";
import type { AnyConfigValue, EntryValue, ListenerKind } from "./schema-types.ts";
import type { Bind } from "./values.ts";

type ExpandSegment<S extends string> = S extends "$kind" ? ListenerKind : S extends `$${string}` ? string : S;
type Expand<S extends string> = S extends `${infer H}.${infer T}`
  ? `${ExpandSegment<H>}.${Expand<T>}`
  : ExpandSegment<S>;

/** Every key string the configuration knows, placeholders widened (`zone.${string}.max_inflight`). */
export type ConfigKey = { [S in SchemaKey]: Expand<S> }[SchemaKey];

type Split<S extends string> = S extends `${infer H}.${infer T}` ? [H, ...Split<T>] : [S];

type SegmentsMatch<K extends string[], P extends string[]> = K extends [
  infer KH extends string,
  ...infer KT extends string[],
]
  ? P extends [infer PH extends string, ...infer PT extends string[]]
    ? PH extends "$kind"
      ? KH extends ListenerKind
        ? SegmentsMatch<KT, PT>
        : false
      : PH extends `$${string}`
        ? SegmentsMatch<KT, PT>
        : KH extends PH
          ? SegmentsMatch<KT, PT>
          : false
    : false
  : P extends []
    ? true
    : false;

/** The schema key that describes a concrete key (exact keys win over placeholder keys). */
export type SchemaKeyOf<K extends string> = K extends SchemaKey
  ? K
  : { [S in SchemaKey]: SegmentsMatch<Split<K>, Split<S>> extends true ? S : never }[SchemaKey];

/** The value type of a key: `ConfigValue<"mqtt.max_packet_size">` is `number` (bytes). */
export type ConfigValue<K extends ConfigKey> = EntryValue<Schema[SchemaKeyOf<K>]>;

type Camel<S extends string> = S extends `${infer H}_${infer T}` ? `${H}${Capitalize<Camel<T>>}` : S;
type ZoneOption = SchemaKey extends infer S ? (S extends `zone.$zone.${infer O}` ? O : never) : never;

/** Every zone option resolved (own value, zone default, then the global key), camelCase. */
export type ZoneConfig = { readonly name: string } & {
  readonly [O in ZoneOption as Camel<O>]: EntryValue<Schema[`zone.$zone.${O}`]>;
};

/** An enabled MQTT listener with every option resolved. */
export interface ListenerConfig {
  readonly kind: ListenerKind;
  readonly name: string;
  readonly protocol: `mqtt:${ListenerKind}`;
  readonly bind: Bind;
  readonly maxConnections: number;
  readonly acceptors: number;
  /** New connections per second, 0 = unlimited. */
  readonly maxConnRate: number;
  readonly zone: string;
  readonly backlog: number;
  readonly nodelay: boolean;
  /** Absolute paths, checked to exist at load; unset = self-signed (ssl/wss only). */
  readonly keyfile?: string;
  readonly certfile?: string;
  readonly cacertfile?: string;
  readonly verify: EntryValue<Schema["listener.$kind.$name.verify"]>;
  readonly failIfNoPeerCert: boolean;
  readonly tlsVersions: string[];
  readonly ciphers?: string[];
  /** TLS 1.2 PSK suites (ssl only): set, the listener accepts TLS-PSK clients. */
  readonly pskCiphers?: string[];
  readonly mqttPath: string;
  /** Milliseconds. */
  readonly handshakeTimeout: number;
}

/** Where a value came from: the schema default, `<file>:<line>`, an SVC_ variable or the CLI. */
export type ConfigSource = "default" | "env" | "cli" | `${string}:${number}`;

/** One row of `Config.entries()`, for the `/configs` API. */
export interface ConfigEntry {
  readonly key: string;
  readonly value: AnyConfigValue;
  /** The text that produced the value (undefined when unset). */
  readonly raw: string | undefined;
  readonly source: ConfigSource;
  /** The global key this zone option inherited its value from, when it did. */
  readonly inheritedFrom?: string;
  readonly description: string;
  /** Whether the value is a secret an API should mask. */
  readonly secret: boolean;
}
