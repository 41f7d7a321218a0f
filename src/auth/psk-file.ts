// svc_psk_file: TLS-PSK (pre-shared keys) on the ssl listener (spec section 5: verified during the
// TLS handshake, outside the authentication chain). The PSK file (`psk.file.path`, default
// etc/psk.txt) holds one `identity<delimiter>key` per line (`psk.file.delimiter`, default `:`), the
// key being the bytes after the first delimiter, as the family reads it; blank lines and lines
// starting with `#` are skipped. A listener that sets `psk_ciphers` (TLS 1.2 PSK suites) is given
// this plugin's `lookup` as its PSK callback: while the plugin is loaded a known identity gets its
// key, otherwise the handshake fails. Loading (or reloading) reads the file again; a bad line stops
// the load with file:line.

import { readFileSync } from "node:fs";
import type { TLSSocket } from "node:tls";
import { ConfigError } from "../config/config-error.ts";
import type { Plugin } from "../plugins/registry.ts";

export const PSK_PLUGIN = "svc_psk_file";

/** OpenSSL's limits: identities up to 128 bytes, keys up to 256 bytes. */
const MAX_IDENTITY = 128;
const MAX_KEY = 256;

export interface PskSettings {
  /** Absolute path of the PSK file. */
  path: string;
  delimiter: string;
  logger: { info(obj: object, msg?: string): void };
}

/** Parses a PSK file; throws ConfigError listing every bad line as `<file>:<line>`. */
export function parsePskText(text: string, name: string, delimiter: string): Map<string, Buffer> {
  const keys = new Map<string, Buffer>();
  const issues: string[] = [];
  text.split("\n").forEach((raw, i) => {
    const line = raw.replace(/\r$/, "");
    if (line.trim() === "" || line.trimStart().startsWith("#")) return;
    const where = `${name}:${i + 1}`;
    const at = line.indexOf(delimiter);
    if (at <= 0) {
      issues.push(`${where}: expected identity${delimiter}key`);
      return;
    }
    const identity = line.slice(0, at);
    const key = Buffer.from(line.slice(at + delimiter.length), "utf8");
    if (Buffer.byteLength(identity) > MAX_IDENTITY) issues.push(`${where}: identity longer than ${MAX_IDENTITY} bytes`);
    else if (key.length === 0 || key.length > MAX_KEY) issues.push(`${where}: the key must be 1..${MAX_KEY} bytes`);
    else keys.set(identity, key);
  });
  if (issues.length > 0) throw new ConfigError(issues);
  return keys;
}

export class PskFilePlugin implements Plugin {
  readonly name = PSK_PLUGIN;
  readonly version = "0.1.0";
  readonly description = "TLS-PSK identities and keys from a file";
  readonly type = "auth" as const;
  private keys: Map<string, Buffer> | null = null;

  constructor(private readonly settings: PskSettings) {}

  /** Node's `pskCallback` of a TLS server: the key of `identity`, or null (handshake fails). */
  readonly lookup = (_socket: TLSSocket, identity: string): Buffer | null => this.keys?.get(identity) ?? null;

  get size(): number {
    return this.keys?.size ?? 0;
  }

  load(): void {
    const { path, delimiter } = this.settings;
    let text: string;
    try {
      text = readFileSync(path, "utf8");
    } catch (err) {
      const reason = err instanceof Error ? err.message : String(err);
      throw new ConfigError(`${path}: cannot read the PSK file: ${reason}`, { cause: err });
    }
    this.keys = parsePskText(text, path, delimiter);
    this.settings.logger.info({ file: path, identities: this.keys.size }, "PSK file loaded");
  }

  unload(): void {
    this.keys = null;
  }
}
