// The link's byte-level writer and reader (src/cluster/link/wire.ts): UTF-8 strings round-trip
// byte-exact (ASCII, non-ASCII at the start, middle and end, surrogate pairs, lone surrogates,
// long strings, the empty string), with the same bytes Node's encoder makes.
import { describe, expect, it } from "vitest";
import { BufReader, BufWriter } from "../../src/cluster/link/wire.ts";

const STRINGS = [
  "",
  "a",
  "bench/a/t",
  "é",
  "émetteur/x",
  "sensor/é/t",
  "topic/ünïcödé",
  "😀/rocket/🚀",
  "x😀",
  "lone\ud800surrogate",
  "\udc00",
  "a".repeat(256),
  `${"a".repeat(255)}é`,
  `${"b".repeat(300)}`,
  `${"ü".repeat(300)}`,
  "日本語/トピック",
];

describe("link wire strings", () => {
  it("round-trips every string with Node's UTF-8 bytes", () => {
    const w = new BufWriter(8);
    for (const s of STRINGS) w.str(s);
    const r = new BufReader(w.view());
    for (const s of STRINGS) {
      const at = r.pos;
      const n = r.varint();
      const bytes = w.view().subarray(r.pos, r.pos + n);
      expect(bytes.equals(Buffer.from(s, "utf8"))).toBe(true);
      r.pos = at;
      expect(r.str()).toBe(Buffer.from(s, "utf8").toString("utf8"));
    }
    r.done();
  });
});
