// SQL functions: time (timestamps, RFC 3339, format_date, date_to_unix_ts, offsets,
// mongo_date).
import { describe, expect, it } from "vitest";
import { evalError, value } from "./helpers.ts";

// 2021-03-04T05:06:07.089Z
const MS = Date.UTC(2021, 2, 4, 5, 6, 7, 89);
const S = Math.floor(MS / 1000);

describe("now_timestamp and now_rfc3339", () => {
  it("now_timestamp in each unit is close to the clock", () => {
    const now = Date.now();
    expect(Math.abs((value("now_timestamp()") as number) - now / 1000)).toBeLessThan(2);
    expect(Math.abs((value("now_timestamp('second')") as number) - now / 1000)).toBeLessThan(2);
    expect(Math.abs((value("now_timestamp('millisecond')") as number) - now)).toBeLessThan(2000);
    expect(Math.abs((value("now_timestamp('microsecond')") as number) / 1e3 - now)).toBeLessThan(2000);
    expect(Math.abs((value("now_timestamp('nanosecond')") as number) / 1e6 - now)).toBeLessThan(2000);
    expect(Number.isInteger(value("now_timestamp('microsecond')"))).toBe(true);
  });

  it("now_rfc3339 has the unit's precision and a local offset", () => {
    expect(value("now_rfc3339()")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/);
    expect(value("now_rfc3339('millisecond')")).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}[+-]\d\d:\d\d$/);
    expect(value("now_rfc3339('microsecond')")).toMatch(/\.\d{6}[+-]\d\d:\d\d$/);
    expect(value("now_rfc3339('nanosecond')")).toMatch(/\.\d{9}[+-]\d\d:\d\d$/);
    const t = Date.parse(value("now_rfc3339('millisecond')") as string);
    expect(Math.abs(t - Date.now())).toBeLessThan(2000);
  });

  it("a bad unit is a rule exception", () => {
    expect(evalError("now_timestamp('hour')")).toMatch(/^bad_argument: now_timestamp expects 'second'/);
  });
});

describe("unix_ts_to_rfc3339 and rfc3339_to_unix_ts", () => {
  it("formats in local time and parses back to the same instant", () => {
    const s = value(`unix_ts_to_rfc3339(${S})`) as string;
    expect(s).toMatch(/^2021-03-0[34]T\d\d:\d\d:07[+-]\d\d:\d\d$/);
    expect(Date.parse(s)).toBe(S * 1000);
    const ms = value(`unix_ts_to_rfc3339(${MS}, 'millisecond')`) as string;
    expect(ms).toMatch(/:07\.089[+-]\d\d:\d\d$/);
    expect(Date.parse(ms)).toBe(MS);
    expect(value(`rfc3339_to_unix_ts(unix_ts_to_rfc3339(${MS}, 'millisecond'), 'millisecond')`)).toBe(MS);
    expect(value(`unix_ts_to_rfc3339(${MS}000, 'microsecond')`)).toMatch(/:07\.089000[+-]/);
  });

  const cases: [string, number][] = [
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07Z')", S],
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07+00:00')", S],
    ["rfc3339_to_unix_ts('2021-03-04T13:06:07+08:00')", S],
    ["rfc3339_to_unix_ts('2021-03-03T23:06:07-06:00')", S],
    ["rfc3339_to_unix_ts('2021-03-04t05:06:07z')", S],
    ["rfc3339_to_unix_ts('2021-03-04 05:06:07Z')", S],
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07.089Z', 'millisecond')", MS],
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07.089Z')", S],
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07.08912Z', 'microsecond')", MS * 1000 + 120],
    ["rfc3339_to_unix_ts('2021-03-04T05:06:07.5Z', 'millisecond')", S * 1000 + 500],
    ["rfc3339_to_unix_ts('1970-01-01T00:00:00Z')", 0],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("bad input is a rule exception", () => {
    expect(evalError("rfc3339_to_unix_ts('2021-03-04')")).toMatch(/^bad_rfc3339/);
    expect(evalError("rfc3339_to_unix_ts('2021-13-04T00:00:00Z')")).toMatch(/^bad_rfc3339/);
    expect(evalError("unix_ts_to_rfc3339('x')")).toMatch(/^bad_argument: unix_ts_to_rfc3339 expects an integer/);
    expect(evalError("rfc3339_to_unix_ts(1)")).toMatch(/^bad_argument/);
  });
});

describe("format_date", () => {
  const cases: [string, string][] = [
    [`format_date('second', 0, '%Y-%m-%d %H:%M:%S', ${S})`, "2021-03-04 05:06:07"],
    [`format_date('second', '+08:00', '%Y-%m-%d %H:%M:%S', ${S})`, "2021-03-04 13:06:07"],
    [`format_date('second', '-06:00', '%Y-%m-%dT%H:%M:%S%:z', ${S})`, "2021-03-03T23:06:07-06:00"],
    [`format_date('second', 'Z', '%Y%m%d', ${S})`, "20210304"],
    [`format_date('second', 3600, '%H:%M %z', ${S})`, "06:06 +0100"],
    [`format_date('second', '+0530', '%H:%M %::z', ${S})`, "10:36 +05:30:00"],
    [`format_date('millisecond', 0, '%S.%3N', ${MS})`, "07.089"],
    [`format_date('millisecond', 0, '%S.%6N', ${MS})`, "07.089000"],
    [`format_date('millisecond', 0, '%S.%N', ${MS})`, "07.089000000"],
    [`format_date('microsecond', 0, '%S.%6N', ${MS * 1000 + 12})`, "07.089012"],
    [`format_date('second', 0, '%S.%3N', ${S})`, "07.000"],
    [`format_date('second', 0, 'day %d, %% and %q', ${S})`, "day 04, %% and %q"],
    [`format_date('second', '+01:30:15', '%::z', ${S})`, "+01:30:15"],
    [`format_date('second', 0, '%Y', 0)`, "1970"],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("without a timestamp formats now", () => {
    const y = new Date().getUTCFullYear();
    expect(value("format_date('second', 0, '%Y')")).toMatch(new RegExp(`^(${y}|${y + 1})$`));
    expect(value("format_date('millisecond', 'local', '%Y-%m-%d')")).toMatch(/^\d{4}-\d\d-\d\d$/);
  });

  it("bad offsets and units are rule exceptions", () => {
    expect(evalError(`format_date('second', '+25:00', '%Y', ${S})`)).toMatch(/^bad_time_offset/);
    expect(evalError(`format_date('second', 'CET', '%Y', ${S})`)).toMatch(/^bad_time_offset: 'CET'/);
    expect(evalError(`format_date('day', 0, '%Y', ${S})`)).toMatch(/^bad_argument: format_date expects 'second'/);
    expect(evalError(`format_date('second', 0, '%Y', 'x')`)).toMatch(/^badarg: format_date timestamp/);
  });
});

describe("date_to_unix_ts", () => {
  const cases: [string, number][] = [
    ["date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S', '2021-03-04 05:06:07')", S],
    ["date_to_unix_ts('millisecond', '%Y-%m-%d %H:%M:%S', '2021-03-04 05:06:07')", S * 1000],
    ["date_to_unix_ts('millisecond', '%Y-%m-%d %H:%M:%S.%3N', '2021-03-04 05:06:07.089')", MS],
    ["date_to_unix_ts('second', '%Y-%m-%d %H:%M:%S.%3N', '2021-03-04 05:06:07.089')", S],
    ["date_to_unix_ts('microsecond', '%Y-%m-%dT%H:%M:%S.%6N', '2021-03-04T05:06:07.089012')", MS * 1000 + 12],
    ["date_to_unix_ts('second', '%Y-%m-%dT%H:%M:%S%:z', '2021-03-04T13:06:07+08:00')", S],
    ["date_to_unix_ts('second', '%Y-%m-%dT%H:%M:%S%z', '2021-03-04T13:06:07+0800')", S],
    ["date_to_unix_ts('second', '%Y-%m-%d', '2021-03-04')", Date.UTC(2021, 2, 4) / 1000],
    ["date_to_unix_ts('second', '%Y%m%d%H%M%S', '20210304050607')", S],
    ["date_to_unix_ts('second', '+08:00', '%Y-%m-%d %H:%M:%S', '2021-03-04 13:06:07')", S],
    ["date_to_unix_ts('millisecond', -3600, '%Y-%m-%d %H:%M:%S', '2021-03-04 04:06:07')", S * 1000],
    ["date_to_unix_ts('second', '%Y-%m-%d', '2024-02-29')", Date.UTC(2024, 1, 29) / 1000],
    ["date_to_unix_ts('second', '%Y-%m-%d', format_date('second', 0, '%Y-%m-%d', 1709164800))", 1709164800],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("input that does not fit the format is a rule exception", () => {
    expect(evalError("date_to_unix_ts('second', '%Y-%m-%d', '2021-03')")).toMatch(/^bad_date/);
    expect(evalError("date_to_unix_ts('second', '%Y-%m-%d', '20xx-03-04')")).toMatch(/^bad_date/);
  });
});

describe("timezone_to_second and mongo_date", () => {
  const cases: [string, number][] = [
    ["timezone_to_second('+08:00')", 28800],
    ["timezone_to_second('-05:30')", -19800],
    ["timezone_to_second('+0100')", 3600],
    ["timezone_to_second('+01:00:30')", 3630],
    ["timezone_to_second('Z')", 0],
    ["timezone_to_second('z')", 0],
    ["timezone_to_second(7200)", 7200],
  ];
  it.each(cases)("%s", (e, want) => {
    expect(value(e)).toBe(want);
  });

  it("local is the process's offset", () => {
    expect(value("timezone_to_second('local')")).toBe(-new Date().getTimezoneOffset() * 60);
  });

  it("bad offsets", () => {
    expect(evalError("timezone_to_second('+24:00')")).toMatch(/^bad_time_offset/);
    expect(evalError("timezone_to_second('08:00')")).toMatch(/^bad_time_offset/);
    expect(evalError("timezone_to_second(1.5)")).toMatch(/^bad_time_offset/);
  });

  it("mongo_date gives dates", () => {
    const d = value("mongo_date()") as Date;
    expect(d).toBeInstanceOf(Date);
    expect(Math.abs(d.getTime() - Date.now())).toBeLessThan(2000);
    expect(value(`mongo_date(${MS})`)).toEqual(new Date(MS));
    expect(value(`mongo_date(${S}, 'second')`)).toEqual(new Date(S * 1000));
    expect(value(`mongo_date(${MS}123, 'microsecond')`)).toEqual(new Date(MS));
    expect(value(`json_encode(mongo_date(${MS}))`)).toBe(`"2021-03-04T05:06:07.089Z"`);
    expect(evalError("mongo_date('x')")).toMatch(/^badarg: mongo_date timestamp/);
  });
});
