// Time functions (emqx-facts 1.2); units are 'second' (default), 'millisecond',
// 'microsecond', 'nanosecond'; calendar.ts has the formats and offsets.
//   now_timestamp([unit]); now_rfc3339([unit]); unix_ts_to_rfc3339(ts[, unit]) (local time,
//   as the family's calendar:system_time_to_rfc3339); rfc3339_to_unix_ts(text[, unit]);
//   format_date(unit, offset, fmt[, ts]) (ts defaults to now); date_to_unix_ts(unit, fmt, text)
//   and date_to_unix_ts(unit, offset, fmt, text) (text without zone, read at `offset`);
//   timezone_to_second(offset).
//   mongo_date([ts_ms]) and mongo_date(ts, unit): the family returned an Erlang timestamp tuple
//   that its MongoDB driver stores as a date; here a JavaScript Date (JSON: ISO 8601 text),
//   which a MongoDB driver stores as a date too.

import { RuleEvalError } from "../errors.ts";
import { short } from "../values.ts";
import { argInt, argOption, argStr } from "./args.ts";
import {
  convertUnit,
  formatDate,
  fromRfc3339,
  nowIn,
  offsetSeconds,
  parseDate,
  TIME_UNITS,
  type TimeUnit,
  toRfc3339,
  UNIT_FACTOR,
} from "./calendar.ts";
import { type FnTable, fn } from "./types.ts";

function unitArg(fname: string, a: unknown[], i: number): TimeUnit {
  return a.length > i ? argOption(fname, a, i, TIME_UNITS) : "second";
}

function tsArg(fname: string, a: unknown[], i: number): number {
  const v = a[i];
  if (typeof v !== "number" || !Number.isFinite(v)) throw new RuleEvalError(`badarg: ${fname} timestamp ${short(v)}`);
  return Math.floor(v);
}

export const timeFunctions: FnTable = {
  now_timestamp: fn([0, 1], (a) => nowIn(unitArg("now_timestamp", a, 0))),
  now_rfc3339: fn([0, 1], (a) => {
    const unit = unitArg("now_rfc3339", a, 0);
    return toRfc3339(nowIn(unit), unit);
  }),
  unix_ts_to_rfc3339: fn([1, 2], (a) =>
    toRfc3339(argInt("unix_ts_to_rfc3339", a, 0), unitArg("unix_ts_to_rfc3339", a, 1)),
  ),
  rfc3339_to_unix_ts: fn([1, 2], (a) =>
    fromRfc3339(argStr("rfc3339_to_unix_ts", a, 0), unitArg("rfc3339_to_unix_ts", a, 1)),
  ),
  format_date: fn([3, 4], (a) => {
    const unit = argOption("format_date", a, 0, TIME_UNITS);
    const ts = a.length === 4 ? tsArg("format_date", a, 3) : nowIn(unit);
    const off = offsetSeconds(a[1], convertUnit(ts, unit, "millisecond"));
    return formatDate(ts, unit, off, argStr("format_date", a, 2));
  }),
  date_to_unix_ts: fn([3, 4], (a) => {
    const unit = argOption("date_to_unix_ts", a, 0, TIME_UNITS);
    if (a.length === 3) return parseDate(argStr("date_to_unix_ts", a, 2), unit, argStr("date_to_unix_ts", a, 1));
    const t = parseDate(argStr("date_to_unix_ts", a, 3), unit, argStr("date_to_unix_ts", a, 2));
    const off = offsetSeconds(a[1], convertUnit(t, unit, "millisecond"));
    return t - off * UNIT_FACTOR[unit];
  }),
  timezone_to_second: fn(1, (a) => offsetSeconds(a[0])),
  mongo_date: fn([0, 1, 2], (a) => {
    if (a.length === 0) return new Date();
    if (a.length === 1) return new Date(tsArg("mongo_date", a, 0));
    return new Date(convertUnit(tsArg("mongo_date", a, 0), argOption("mongo_date", a, 1, TIME_UNITS), "millisecond"));
  }),
};
