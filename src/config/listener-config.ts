// Builds the list of enabled MQTT listeners: every `listener.<kind>.<name>` whose value is not
// `off`, with its options resolved, ordered tcp, ssl, ws, wss and then by name.

import type { ListenerConfig } from "./config-types.ts";
import { matchKey } from "./key-match.ts";
import { SCHEMA, type Schema, type SchemaKey } from "./schema.ts";
import { type EntryValue, LISTENER_KINDS, type ListenerKind } from "./schema-types.ts";

/** `listener.<kind>.<name>` keys: the schema's exact ones plus those the layers define. */
export function listenerKeys(setKeys: Iterable<string>): string[] {
  const keys = new Set<string>();
  for (const k of [...Object.keys(SCHEMA), ...setKeys]) {
    const m = matchKey(k);
    if (m !== undefined && !k.includes("$") && k.split(".").length === 3 && m.params.kind !== undefined) keys.add(k);
  }
  const rank = (k: string): number => LISTENER_KINDS.indexOf(k.split(".")[1] as ListenerKind);
  return [...keys].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

type OptionName = SchemaKey extends infer S ? (S extends `listener.$kind.$name.${infer O}` ? O : never) : never;
type OptionValue<O extends OptionName> = EntryValue<Schema[`listener.$kind.$name.${O}`]>;

export function buildListener(key: string, read: (key: string) => unknown): ListenerConfig | undefined {
  const [, kind, name] = key.split(".") as [string, ListenerKind, string];
  const bind = read(key) as ListenerConfig["bind"] | null | undefined;
  if (bind == null) return undefined;
  const get = <O extends OptionName>(opt: O): OptionValue<O> => read(`${key}.${opt}`) as OptionValue<O>;
  return {
    kind,
    name,
    protocol: `mqtt:${kind}`,
    bind,
    maxConnections: get("max_connections"),
    acceptors: get("acceptors"),
    maxConnRate: get("max_conn_rate"),
    zone: get("zone"),
    backlog: get("backlog"),
    nodelay: get("nodelay"),
    keyfile: get("keyfile"),
    certfile: get("certfile"),
    cacertfile: get("cacertfile"),
    verify: get("verify"),
    failIfNoPeerCert: get("fail_if_no_peer_cert"),
    tlsVersions: [...get("tls_versions")],
    ciphers: get("ciphers"),
    pskCiphers: get("psk_ciphers"),
    mqttPath: get("mqtt_path"),
    handshakeTimeout: get("handshake_timeout"),
  };
}
