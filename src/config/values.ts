// Value parsers for configuration text: each turns what an operator writes (`15s`, `1MB`, `on`,
// `127.0.0.1:1883`...) into a typed value, or into an error message that the loader prefixes with
// the file line or environment variable it came from. Pure, except `parseFile`, which checks that
// the file exists (validation happens once, at load).

import { statSync } from "node:fs";
import { isIPv4, isIPv6 } from "node:net";
import { resolve } from "node:path";

export type Parsed<T> = { readonly ok: true; readonly value: T } | { readonly ok: false; readonly error: string };

/** An address to listen on; `host` is written without brackets (`::1`). */
export interface Bind {
  readonly host: string;
  readonly port: number;
}

export interface Range {
  readonly min?: number;
  readonly max?: number;
}

export const ok = <T>(value: T): Parsed<T> => ({ ok: true, value });
export const fail = (error: string): Parsed<never> => ({ ok: false, error });

const q = (raw: string): string => JSON.stringify(raw);

/** `unit` names the unit of the bounds in messages (`ms` for durations, `bytes` for sizes). */
function inRange(what: string, raw: string, n: number, range: Range, unit = ""): Parsed<number> {
  if (!Number.isFinite(n) || (what !== "number" && !Number.isSafeInteger(n))) return fail(`invalid ${what} ${q(raw)}`);
  const { min, max } = range;
  if ((min !== undefined && n < min) || (max !== undefined && n > max)) {
    const u = unit === "" ? "" : ` ${unit}`;
    const bounds =
      min !== undefined && max !== undefined
        ? `${min}..${max}${u}`
        : min !== undefined
          ? `>= ${min}${u}`
          : `<= ${max}${u}`;
    return fail(`${what} ${q(raw)} out of range (${bounds})`);
  }
  return ok(n);
}

const DURATION_MS = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };

/**
 * Duration in milliseconds: `500ms`, `15s`, `1m`, `2h`, `1d`, `1w`, or a sum such as `1h30m`.
 * A bare integer counts `bareUnit`s: milliseconds for `duration` keys, seconds for `duration_s`.
 */
export function parseDuration(raw: string, bareUnit: "ms" | "s" = "ms", range: Range = {}): Parsed<number> {
  const text = raw.trim();
  if (/^\d+$/.test(text)) return inRange("duration", raw, Number(text) * DURATION_MS[bareUnit], range, "ms");
  const part = /(\d+(?:\.\d+)?)(ms|s|m|h|d|w)/y;
  let total = 0;
  let pos = 0;
  while (pos < text.length) {
    part.lastIndex = pos;
    const m = part.exec(text);
    if (m === null) break;
    total += Number(m[1]) * DURATION_MS[m[2] as keyof typeof DURATION_MS];
    pos = part.lastIndex;
  }
  if (text === "" || pos < text.length) {
    return fail(`invalid duration ${q(raw)} (expected e.g. 500ms, 15s, 1m, 2h, 1d)`);
  }
  return inRange("duration", raw, Math.round(total), range, "ms");
}

const SIZE_BYTES: Readonly<Record<string, number>> = {
  "": 1,
  b: 1,
  k: 1024,
  kb: 1024,
  m: 1024 ** 2,
  mb: 1024 ** 2,
  g: 1024 ** 3,
  gb: 1024 ** 3,
};

/** Size in bytes: `64KB`, `1MB`, `1GB` (powers of 1024, case-insensitive) or bare bytes. */
export function parseSize(raw: string, range: Range = {}): Parsed<number> {
  const m = /^(\d+)\s*([a-z]*)$/i.exec(raw.trim());
  const unit = m === null ? undefined : SIZE_BYTES[m[2].toLowerCase()];
  if (m === null || unit === undefined) return fail(`invalid size ${q(raw)} (expected e.g. 512, 64KB, 1MB, 1GB)`);
  return inRange("size", raw, Number(m[1]) * unit, range, "bytes");
}

/** `on`/`true` or `off`/`false`. */
export function parseBoolean(raw: string): Parsed<boolean> {
  const text = raw.trim().toLowerCase();
  if (text === "on" || text === "true") return ok(true);
  if (text === "off" || text === "false") return ok(false);
  return fail(`invalid boolean ${q(raw)} (expected on, off, true or false)`);
}

export function parseInteger(raw: string, range: Range = {}): Parsed<number> {
  const text = raw.trim();
  if (!/^[+-]?\d+$/.test(text) || !Number.isSafeInteger(Number(text))) return fail(`invalid integer ${q(raw)}`);
  return inRange("integer", raw, Number(text), range);
}

export function parseFloatValue(raw: string, range: Range = {}): Parsed<number> {
  const text = raw.trim();
  if (!/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/i.test(text)) return fail(`invalid number ${q(raw)}`);
  return inRange("number", raw, Number(text), range);
}

/** Any text; `nonEmpty` rejects the empty string. */
export function parseString(raw: string, nonEmpty = false): Parsed<string> {
  return nonEmpty && raw === "" ? fail("must not be empty") : ok(raw);
}

export function parseEnum<const V extends string>(raw: string, values: readonly V[]): Parsed<V> {
  const text = raw.trim();
  const found = values.find((v) => v === text);
  return found === undefined ? fail(`invalid value ${q(raw)} (expected one of: ${values.join(", ")})`) : ok(found);
}

const HOSTNAME =
  /^(?=.{1,253}$)[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?)*$/;

/** `<port>`, `<host>:<port>` or `[<ipv6>]:<port>`; port 0 asks the OS for a free port. */
export function parseBind(raw: string): Parsed<Bind> {
  const text = raw.trim();
  const bad = fail(`invalid bind ${q(raw)} (expected <port>, <host>:<port> or [<ipv6>]:<port>)`);
  const m = /^(?:\[([^\]]+)\]:|([^:[\]]+):)?(\d{1,5})$/.exec(text);
  if (m === null) return bad;
  const port = Number(m[3]);
  if (port > 65535) return fail(`invalid bind ${q(raw)}: port ${port} out of range (0..65535)`);
  if (m[1] !== undefined) return isIPv6(m[1]) ? ok({ host: m[1], port }) : bad;
  const host = m[2] ?? "0.0.0.0";
  const numeric = /^[\d.]+$/.test(host);
  if (numeric ? !isIPv4(host) : !HOSTNAME.test(host)) return bad;
  return ok({ host, port });
}

/** A bind, or `off` (null) to disable the listener. */
export function parseBindOrOff(raw: string): Parsed<Bind | null> {
  return raw.trim() === "off" ? ok(null) : parseBind(raw);
}

/** Comma-separated list; blanks around items and empty items are dropped. */
export function parseList(
  raw: string,
  item: (text: string) => Parsed<string> = ok,
  nonEmpty = false,
): Parsed<string[]> {
  const items = raw
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
  if (nonEmpty && items.length === 0) return fail("list must not be empty");
  const out: string[] = [];
  for (const text of items) {
    const r = item(text);
    if (!r.ok) return r;
    out.push(r.value);
  }
  return ok(out);
}

/** A path, resolved against `cwd` (the process working directory at load). */
export function parsePath(raw: string, cwd: string): Parsed<string> {
  const text = raw.trim();
  return text === "" ? fail("path must not be empty") : ok(resolve(cwd, text));
}

/** A path to a file that must exist when the configuration is loaded. */
export function parseFile(raw: string, cwd: string): Parsed<string> {
  const p = parsePath(raw, cwd);
  if (!p.ok) return p;
  try {
    return statSync(p.value).isFile() ? p : fail(`not a regular file: ${p.value}`);
  } catch {
    return fail(`file not found: ${p.value}`);
  }
}

/** Erlang-style node name `<name>@<host>`. */
export function parseNodeName(raw: string): Parsed<string> {
  const text = raw.trim();
  const m = /^([A-Za-z0-9_-]+)@(.+)$/.exec(text);
  const host = m?.[2] ?? "";
  if (m === null || !(isIPv4(host) || HOSTNAME.test(host))) {
    return fail(`invalid node name ${q(raw)} (expected <name>@<host>)`);
  }
  return ok(text);
}

/** Name of a zone or listener: letters, digits, `_` and `-`. */
export function parseName(raw: string): Parsed<string> {
  const text = raw.trim();
  return /^[A-Za-z0-9_-]+$/.test(text) ? ok(text) : fail(`invalid name ${q(raw)} (letters, digits, _ and - only)`);
}

export function parseHttpUrl(raw: string): Parsed<string> {
  const text = raw.trim();
  const url = URL.parse(text);
  return url !== null && (url.protocol === "http:" || url.protocol === "https:") && url.host !== ""
    ? ok(text)
    : fail(`invalid URL ${q(raw)} (expected http://host:port or https://host:port)`);
}

/** Absolute HTTP path such as `/mqtt`. */
export function parseHttpPath(raw: string): Parsed<string> {
  const text = raw.trim();
  return /^\/[A-Za-z0-9._~!$&'()*+,;=:@/%-]*$/.test(text)
    ? ok(text)
    : fail(`invalid HTTP path ${q(raw)} (expected e.g. /mqtt)`);
}
