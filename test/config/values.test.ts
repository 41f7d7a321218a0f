import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  type Parsed,
  parseBind,
  parseBindOrOff,
  parseBoolean,
  parseDuration,
  parseEnum,
  parseFile,
  parseFloatValue,
  parseHttpPath,
  parseHttpUrl,
  parseInteger,
  parseList,
  parseName,
  parseNodeName,
  parsePath,
  parseSize,
  parseString,
} from "../../src/config/values.ts";
import { useTempDir } from "./temp-dir.ts";

const value = <T>(r: Parsed<T>): T => {
  if (!r.ok) throw new Error(`expected a value, got error: ${r.error}`);
  return r.value;
};
const error = <T>(r: Parsed<T>): string => {
  if (r.ok) throw new Error(`expected an error, got ${JSON.stringify(r.value)}`);
  return r.error;
};

describe("parseDuration", () => {
  it("reads units into milliseconds", () => {
    expect(value(parseDuration("500ms"))).toBe(500);
    expect(value(parseDuration("15s"))).toBe(15_000);
    expect(value(parseDuration("1m"))).toBe(60_000);
    expect(value(parseDuration("2h"))).toBe(7_200_000);
    expect(value(parseDuration("1d"))).toBe(86_400_000);
    expect(value(parseDuration("1w"))).toBe(604_800_000);
    expect(value(parseDuration("1h30m"))).toBe(5_400_000);
    expect(value(parseDuration("1.5s"))).toBe(1500);
    expect(value(parseDuration(" 30s "))).toBe(30_000);
  });
  it("reads a bare integer as milliseconds, or seconds for duration_s", () => {
    expect(value(parseDuration("250"))).toBe(250);
    expect(value(parseDuration("0"))).toBe(0);
    expect(value(parseDuration("30", "s"))).toBe(30_000);
    expect(value(parseDuration("30s", "s"))).toBe(30_000);
  });
  it("rejects bad text", () => {
    for (const bad of ["", "s", "15 s", "-1s", "1y", "1m30", "ten", "15S"]) {
      expect(error(parseDuration(bad))).toMatch(/^invalid duration/);
    }
  });
  it("checks the range", () => {
    expect(error(parseDuration("1s", "ms", { min: 5000 }))).toMatch(/out of range/);
  });
});

describe("parseSize", () => {
  it("reads units as powers of 1024", () => {
    expect(value(parseSize("64KB"))).toBe(65_536);
    expect(value(parseSize("1MB"))).toBe(1_048_576);
    expect(value(parseSize("1GB"))).toBe(1_073_741_824);
    expect(value(parseSize("8mb"))).toBe(8 * 1_048_576);
    expect(value(parseSize("2K"))).toBe(2048);
    expect(value(parseSize("512"))).toBe(512);
    expect(value(parseSize("100B"))).toBe(100);
  });
  it("rejects bad text and out-of-range sizes", () => {
    for (const bad of ["", "MB", "1.5MB", "-1", "1XB", "1 M B"]) expect(error(parseSize(bad))).toMatch(/^invalid size/);
    expect(error(parseSize("512MB", { max: 268_435_455 }))).toMatch(/out of range \(\.\.268435455\)|out of range/);
  });
});

describe("parseBoolean", () => {
  it("reads on/off/true/false", () => {
    expect(value(parseBoolean("on"))).toBe(true);
    expect(value(parseBoolean("true"))).toBe(true);
    expect(value(parseBoolean("off"))).toBe(false);
    expect(value(parseBoolean("false"))).toBe(false);
    expect(value(parseBoolean("ON"))).toBe(true);
  });
  it("rejects anything else", () => {
    for (const bad of ["", "yes", "1", "enabled"]) expect(error(parseBoolean(bad))).toMatch(/^invalid boolean/);
  });
});

describe("parseInteger and parseFloatValue", () => {
  it("reads integers within the range", () => {
    expect(value(parseInteger("42"))).toBe(42);
    expect(value(parseInteger("-3"))).toBe(-3);
    expect(value(parseInteger("23", { min: 23, max: 65535 }))).toBe(23);
  });
  it("rejects non-integers and values out of range", () => {
    for (const bad of ["", "1.5", "1e3", "0x10", "ten", "99999999999999999999"]) {
      expect(error(parseInteger(bad))).toMatch(/^invalid integer/);
    }
    expect(error(parseInteger("3", { min: 0, max: 2 }))).toBe('integer "3" out of range (0..2)');
    expect(error(parseInteger("-1", { min: 0 }))).toBe('integer "-1" out of range (>= 0)');
  });
  it("reads floats", () => {
    expect(value(parseFloatValue("0.75"))).toBe(0.75);
    expect(value(parseFloatValue("2"))).toBe(2);
    expect(value(parseFloatValue("1e-3"))).toBe(0.001);
    expect(error(parseFloatValue("0.1", { min: 0.5 }))).toMatch(/out of range/);
    for (const bad of ["", "abc", "1.2.3", "NaN", "Infinity"])
      expect(error(parseFloatValue(bad))).toMatch(/^invalid number/);
  });
});

describe("parseString and parseEnum", () => {
  it("keeps text as is; nonEmpty rejects the empty string", () => {
    expect(value(parseString(" a b "))).toBe(" a b ");
    expect(value(parseString(""))).toBe("");
    expect(error(parseString("", true))).toMatch(/empty/);
  });
  it("accepts only listed values", () => {
    expect(value(parseEnum("deny", ["allow", "deny"]))).toBe("deny");
    expect(error(parseEnum("maybe", ["allow", "deny"]))).toBe('invalid value "maybe" (expected one of: allow, deny)');
    expect(error(parseEnum("Allow", ["allow", "deny"]))).toMatch(/^invalid value/);
  });
});

describe("parseBind", () => {
  it("reads host:port, a bare port and [ipv6]:port", () => {
    expect(value(parseBind("127.0.0.1:1883"))).toEqual({ host: "127.0.0.1", port: 1883 });
    expect(value(parseBind("1883"))).toEqual({ host: "0.0.0.0", port: 1883 });
    expect(value(parseBind("[::1]:8883"))).toEqual({ host: "::1", port: 8883 });
    expect(value(parseBind("[::]:0"))).toEqual({ host: "::", port: 0 });
    expect(value(parseBind("localhost:8083"))).toEqual({ host: "localhost", port: 8083 });
    expect(value(parseBind("broker-1.example.com:1"))).toEqual({ host: "broker-1.example.com", port: 1 });
  });
  it("allows port 0 (any free port)", () => {
    expect(value(parseBind("0"))).toEqual({ host: "0.0.0.0", port: 0 });
    expect(value(parseBind("127.0.0.1:0"))).toEqual({ host: "127.0.0.1", port: 0 });
  });
  it("rejects bad binds", () => {
    for (const bad of ["x", "", ":1883", "1883:", "::1:1883", "[::1]", "[x]:1", "300.1.1.1:1", "host:-1", "a b:1"]) {
      expect(error(parseBind(bad))).toMatch(/^invalid bind/);
    }
    expect(error(parseBind("65536"))).toMatch(/port 65536 out of range/);
  });
  it("reads off as disabled where allowed", () => {
    expect(value(parseBindOrOff("off"))).toBeNull();
    expect(value(parseBindOrOff("1883"))).toEqual({ host: "0.0.0.0", port: 1883 });
    expect(error(parseBind("off"))).toMatch(/^invalid bind/);
  });
});

describe("parseList", () => {
  it("splits on commas and trims", () => {
    expect(value(parseList("tlsv1.3, tlsv1.2"))).toEqual(["tlsv1.3", "tlsv1.2"]);
    expect(value(parseList(""))).toEqual([]);
    expect(value(parseList("a,,b,"))).toEqual(["a", "b"]);
  });
  it("checks each item and emptiness when asked", () => {
    expect(error(parseList("tlsv1.3,sslv3", (t) => parseEnum(t, ["tlsv1.3", "tlsv1.2"])))).toMatch(/"sslv3"/);
    expect(error(parseList(" , ", undefined, true))).toMatch(/empty/);
    expect(value(parseList("a@h1,b@h2", parseNodeName))).toEqual(["a@h1", "b@h2"]);
  });
});

describe("paths", () => {
  const tmp = useTempDir();
  it("resolves relative paths against the given directory", () => {
    expect(value(parsePath("data", "/srv/svc"))).toBe("/srv/svc/data");
    expect(value(parsePath("/var/lib/svc", "/srv/svc"))).toBe("/var/lib/svc");
    expect(error(parsePath("  ", "/srv"))).toMatch(/empty/);
  });
  it("requires a file to exist", () => {
    const file = tmp.write("cert.pem", "x");
    expect(value(parseFile("cert.pem", tmp.dir()))).toBe(file);
    expect(error(parseFile("missing.pem", tmp.dir()))).toBe(`file not found: ${join(tmp.dir(), "missing.pem")}`);
    mkdirSync(join(tmp.dir(), "sub"));
    expect(error(parseFile("sub", tmp.dir()))).toMatch(/^not a regular file/);
  });
});

describe("names, node names, URLs, HTTP paths", () => {
  it("reads <name>@<host> node names", () => {
    expect(value(parseNodeName("svc@127.0.0.1"))).toBe("svc@127.0.0.1");
    expect(value(parseNodeName("svc-1@pod.svc.cluster.local"))).toBe("svc-1@pod.svc.cluster.local");
    for (const bad of ["svc", "@host", "svc@", "a@b@c", "s v@h"])
      expect(error(parseNodeName(bad))).toMatch(/node name/);
  });
  it("reads zone and listener names", () => {
    expect(value(parseName("internal_2-a"))).toBe("internal_2-a");
    for (const bad of ["", "a.b", "a b"]) expect(error(parseName(bad))).toMatch(/invalid name/);
  });
  it("reads http(s) URLs", () => {
    expect(value(parseHttpUrl("http://127.0.0.1:2379"))).toBe("http://127.0.0.1:2379");
    for (const bad of ["127.0.0.1:2379", "ftp://x", "http://"]) expect(error(parseHttpUrl(bad))).toMatch(/invalid URL/);
  });
  it("reads absolute HTTP paths", () => {
    expect(value(parseHttpPath("/mqtt"))).toBe("/mqtt");
    for (const bad of ["mqtt", "", "/a b"]) expect(error(parseHttpPath(bad))).toMatch(/invalid HTTP path/);
  });
});
