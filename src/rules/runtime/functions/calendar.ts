// Calendar arithmetic for the time functions: time units, the current time, UTC offsets,
// RFC 3339 text, and the family's date formatter (emqx_calendar):
//   %Y year (4 digits)  %m month  %d day  %H hour  %M minute  %S second (2 digits each)
//   %N nanoseconds (9)  %6N microseconds (6)  %3N milliseconds (3)
//   %z +hhmm  %:z +hh:mm  %::z +hh:mm:ss
// anything else is copied. Parsing reads each directive with that fixed width and skips one
// character per literal character. Offsets are integers (seconds), "local", "Z"/"z", "+hh:mm",
// "+hh:mm:ss" or "+hhmm". Values are JavaScript numbers: nanosecond timestamps of today exceed
// 2^53 and lose their last digits.

import { RuleEvalError } from "../errors.ts";
import { isNull, short, textOf } from "../values.ts";

export type TimeUnit = "second" | "millisecond" | "microsecond" | "nanosecond";

export const TIME_UNITS: readonly TimeUnit[] = ["second", "millisecond", "microsecond", "nanosecond"];

export const UNIT_FACTOR: Readonly<Record<TimeUnit, number>> = {
  second: 1,
  millisecond: 1e3,
  microsecond: 1e6,
  nanosecond: 1e9,
};

/** The current time in `unit` (sub-millisecond precision from the monotonic clock). */
export function nowIn(unit: TimeUnit): number {
  if (unit === "second") return Math.floor(Date.now() / 1000);
  if (unit === "millisecond") return Date.now();
  const ms = performance.timeOrigin + performance.now();
  return Math.floor(ms * (UNIT_FACTOR[unit] / 1e3));
}

/** floor(t in unit `from`) expressed in unit `to`. */
export function convertUnit(t: number, from: TimeUnit, to: TimeUnit): number {
  const f = UNIT_FACTOR[from];
  const g = UNIT_FACTOR[to];
  return g >= f ? t * (g / f) : Math.floor(t / (f / g));
}

function pad(n: number, w: number): string {
  return String(n).padStart(w, "0");
}

function badOffset(v: unknown): never {
  throw new RuleEvalError(`bad_time_offset: ${short(v)}`);
}

/** The UTC offset of local time at `ms`, in seconds. */
export function localOffset(ms: number): number {
  return -new Date(ms).getTimezoneOffset() * 60;
}

/** An offset argument in seconds (see the header). */
export function offsetSeconds(v: unknown, atMs = Date.now()): number {
  if (isNull(v)) return 0;
  if (typeof v === "number") {
    if (!Number.isInteger(v)) badOffset(v);
    return v;
  }
  const s = textOf(v);
  if (s === null) return badOffset(v);
  if (s === "local") return localOffset(atMs);
  if (s === "Z" || s === "z") return 0;
  const m = /^([+-])(?:(\d{1,2}):(\d{1,2})(?::(\d{1,2}))?|(\d{2})(\d{2}))$/.exec(s);
  if (m === null) return badOffset(v);
  const h = Number(m[2] ?? m[5]);
  const min = Number(m[3] ?? m[6]);
  const sec = Number(m[4] ?? 0);
  if (h > 23 || min > 59 || sec > 59) badOffset(v);
  return (m[1] === "-" ? -1 : 1) * (h * 3600 + min * 60 + sec);
}

function offsetText(off: number, style: 0 | 1 | 2): string {
  const sign = off >= 0 ? "+" : "-";
  const a = Math.abs(off);
  const h = pad(Math.floor(a / 3600), 2);
  const m = pad(Math.floor((a % 3600) / 60), 2);
  const s = pad(a % 60, 2);
  return style === 0 ? `${sign}${h}${m}` : style === 1 ? `${sign}${h}:${m}` : `${sign}${h}:${m}:${s}`;
}

function mod(a: number, b: number): number {
  return ((a % b) + b) % b;
}

/** RFC 3339 text of time `t` (in `unit`) in local time, with fractions to the unit's precision. */
export function toRfc3339(t: number, unit: TimeUnit): string {
  const f = UNIT_FACTOR[unit];
  const secs = Math.floor(t / f);
  const off = localOffset(secs * 1000);
  const d = new Date((secs + off) * 1000);
  const frac = unit === "second" ? "" : `.${pad(mod(t, f), Math.log10(f))}`;
  return (
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1, 2)}-${pad(d.getUTCDate(), 2)}` +
    `T${pad(d.getUTCHours(), 2)}:${pad(d.getUTCMinutes(), 2)}:${pad(d.getUTCSeconds(), 2)}${frac}${offsetText(off, 1)}`
  );
}

const RFC3339_RE = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/;

/** Time in `unit` of an RFC 3339 text (finer fractions are truncated). */
export function fromRfc3339(s: string, unit: TimeUnit): number {
  const m = RFC3339_RE.exec(s);
  if (m === null) throw new RuleEvalError(`bad_rfc3339: ${short(s)}`);
  const [, y, mo, d, h, mi, se, fr, off] = m;
  const ms = Date.UTC(Number(y), Number(mo) - 1, Number(d), Number(h), Number(mi), Number(se));
  if (Number.isNaN(ms) || Number(mo) < 1 || Number(mo) > 12 || Number(d) < 1 || Number(d) > 31) {
    throw new RuleEvalError(`bad_rfc3339: ${short(s)}`);
  }
  const secs = ms / 1000 - offsetSeconds(off);
  const f = UNIT_FACTOR[unit];
  const digits = Math.log10(f);
  const fracUnits = digits === 0 || fr === undefined ? 0 : Number(fr.slice(0, digits).padEnd(digits, "0"));
  return secs * f + fracUnits;
}

type Directive = "Y" | "m" | "d" | "H" | "M" | "S" | "N" | "6N" | "3N" | "z" | ":z" | "::z";
type FormatPart = string | { readonly d: Directive };

const DIRECTIVES: readonly Directive[] = ["::z", ":z", "6N", "3N", "Y", "m", "d", "H", "M", "S", "N", "z"];
const WIDTH: Readonly<Record<Directive, number>> = {
  Y: 4,
  m: 2,
  d: 2,
  H: 2,
  M: 2,
  S: 2,
  N: 9,
  "6N": 6,
  "3N": 3,
  z: 5,
  ":z": 6,
  "::z": 9,
};

const formatCache = new Map<string, FormatPart[]>();

function parseFormat(fmt: string): FormatPart[] {
  let parts = formatCache.get(fmt);
  if (parts !== undefined) return parts;
  parts = [];
  let lit = "";
  for (let i = 0; i < fmt.length; ) {
    if (fmt[i] === "%") {
      const d = DIRECTIVES.find((x) => fmt.startsWith(x, i + 1));
      if (d !== undefined) {
        if (lit !== "") parts.push(lit);
        lit = "";
        parts.push({ d });
        i += 1 + d.length;
        continue;
      }
    }
    lit += fmt[i++];
  }
  if (lit !== "") parts.push(lit);
  if (formatCache.size < 256) formatCache.set(fmt, parts);
  return parts;
}

/** format_date: time `t` in `unit`, shown at UTC offset `off` seconds, per `fmt`. */
export function formatDate(t: number, unit: TimeUnit, off: number, fmt: string): string {
  const f = UNIT_FACTOR[unit];
  const secs = Math.floor((t + off * f) / f);
  const d = new Date(secs * 1000);
  const sub = mod(t, f); // sub-second part in `unit`
  const frac = (digits: number) =>
    pad(
      Math.floor(convertUnit(sub, unit, digits === 3 ? "millisecond" : digits === 6 ? "microsecond" : "nanosecond")),
      digits,
    );
  let out = "";
  for (const p of parseFormat(fmt)) {
    if (typeof p === "string") {
      out += p;
      continue;
    }
    switch (p.d) {
      case "Y":
        out += pad(d.getUTCFullYear(), 4);
        break;
      case "m":
        out += pad(d.getUTCMonth() + 1, 2);
        break;
      case "d":
        out += pad(d.getUTCDate(), 2);
        break;
      case "H":
        out += pad(d.getUTCHours(), 2);
        break;
      case "M":
        out += pad(d.getUTCMinutes(), 2);
        break;
      case "S":
        out += pad(d.getUTCSeconds(), 2);
        break;
      case "N":
        out += frac(9);
        break;
      case "6N":
        out += frac(6);
        break;
      case "3N":
        out += frac(3);
        break;
      case "z":
        out += offsetText(off, 0);
        break;
      case ":z":
        out += offsetText(off, 1);
        break;
      case "::z":
        out += offsetText(off, 2);
        break;
    }
  }
  return out;
}

/** date_to_unix_ts: the time in `unit` of `input` written per `fmt` (UTC unless it has %z). */
export function parseDate(input: string, unit: TimeUnit, fmt: string): number {
  const bad = (): never => {
    throw new RuleEvalError(`bad_date: ${short(input)} does not match ${short(fmt)}`);
  };
  const v: Record<string, number> = {};
  let off = 0;
  let i = 0;
  for (const p of parseFormat(fmt)) {
    if (typeof p === "string") {
      i += p.length;
      continue;
    }
    const w = WIDTH[p.d];
    const text = input.slice(i, i + w);
    if (text.length < w) bad();
    i += w;
    if (p.d === "z" || p.d === ":z" || p.d === "::z") off = offsetSeconds(text);
    else {
      if (!/^\d+$/.test(text)) bad();
      v[p.d] = Number(text);
    }
  }
  const ms = Date.UTC(v.Y ?? 1970, (v.m ?? 1) - 1, v.d ?? 1, v.H ?? 0, v.M ?? 0, v.S ?? 0);
  if (Number.isNaN(ms)) bad();
  // Years 0..99 are taken literally (Date.UTC would map them to 1900..1999).
  const year = v.Y ?? 1970;
  const fixed = year < 100 ? new Date(ms).setUTCFullYear(year) : ms;
  const secs = fixed / 1000 - off;
  let ns = 0;
  if (v.N !== undefined) ns = v.N;
  else if (v["6N"] !== undefined) ns = v["6N"] * 1e3;
  else if (v["3N"] !== undefined) ns = v["3N"] * 1e6;
  const f = UNIT_FACTOR[unit];
  return secs * f + Math.floor((ns * f) / 1e9);
}
