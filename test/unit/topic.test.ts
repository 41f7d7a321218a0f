import { describe, expect, it } from "vitest";
import {
  isWildcard,
  MAX_TOPIC_BYTES,
  matchTopic,
  parseSharedFilter,
  topicLevels,
  utf8ByteLength,
  validateTopicFilter,
  validateTopicName,
} from "../../src/mqtt/topic.ts";

describe("validateTopicName", () => {
  const valid = [
    "a",
    "/",
    "//",
    "sport/tennis/player1",
    "/finance",
    "finance/",
    "$SYS/broker/uptime",
    "Accounts payable",
    "ÄÖÜ/日本/😀",
    " ",
    "a b/c",
  ];
  const invalid = [
    "",
    "+",
    "#",
    "sport/+",
    "sport/#",
    "sport+",
    "a#b",
    "a\u0000b",
    "\u0000",
    "a/\ud800", // lone high surrogate
    "\udc00", // lone low surrogate
    "\ud800x",
  ];
  it.each(valid)("accepts %j", (t) => {
    expect(validateTopicName(t, 0)).toBe(true);
  });
  it.each(invalid)("rejects %j", (t) => {
    expect(validateTopicName(t, 0)).toBe(false);
  });

  it("applies the level limit only when maxLevels > 0", () => {
    expect(validateTopicName("a/b/c", 3)).toBe(true);
    expect(validateTopicName("a/b/c/d", 3)).toBe(false);
    expect(validateTopicName("a/b/c/d", 0)).toBe(true);
    expect(validateTopicName("/", 2)).toBe(true);
    expect(validateTopicName("/", 1)).toBe(false);
    expect(validateTopicName("a/b/c/d", -1)).toBe(true);
  });

  it("enforces the 65535-byte UTF-8 limit", () => {
    expect(validateTopicName("a".repeat(MAX_TOPIC_BYTES), 0)).toBe(true);
    expect(validateTopicName("a".repeat(MAX_TOPIC_BYTES + 1), 0)).toBe(false);
    // 2-byte chars: 32767 * 2 = 65534 ok, + 1 ascii = 65535 ok, + 2 more bytes too many
    expect(validateTopicName(`${"é".repeat(32767)}a`, 0)).toBe(true);
    expect(validateTopicName("é".repeat(32768), 0)).toBe(false);
    // 3-byte chars: 21845 * 3 = 65535
    expect(validateTopicName("日".repeat(21845), 0)).toBe(true);
    expect(validateTopicName(`${"日".repeat(21845)}a`, 0)).toBe(false);
    // 4-byte (surrogate pairs): 16383 * 4 = 65532 + 3 = 65535
    expect(validateTopicName(`${"😀".repeat(16383)}abc`, 0)).toBe(true);
    expect(validateTopicName("😀".repeat(16384), 0)).toBe(false);
  });
});

describe("validateTopicFilter", () => {
  const valid = [
    "#",
    "+",
    "+/+",
    "/+",
    "+/",
    "/",
    "sport/tennis/player1/#",
    "sport/#",
    "+/tennis/#",
    "sport/+/player1",
    "sport/tennis/+",
    "$SYS/#",
    "$SYS/monitor/+",
    "a//b",
    "$share/g/a/b",
    "$share/g/#",
    "$share/g/+/x",
    "$share/group-1/$SYS/#",
    "$share/g//",
    "$share/g/$share/h/x",
    "$queue/a/b",
    "$queue/#",
    "$queue/+",
    "$share", // not the shared form: plain one-level filter
    "$queue",
    "$sharex/a",
    "ÄÖÜ/+/😀",
  ];
  const invalid = [
    "",
    "sport/tennis#",
    "sport/tennis/#/ranking",
    "sport+",
    "sport/+a",
    "a+/b",
    "##",
    "#/",
    "#/a",
    "++",
    "a/#/",
    "a\u0000",
    "\u0000/#",
    "a/\udfff",
    "$share/g",
    "$share/g/",
    "$share//x",
    "$share/",
    "$share/+/x",
    "$share/#/x",
    "$share/g+/x",
    "$share/g/a#",
    "$share/g/a/#/b",
    "$share/\u0000/x",
    "$queue/",
    "$queue/a+",
  ];
  it.each(valid)("accepts %j", (f) => {
    expect(validateTopicFilter(f, 0)).toBe(true);
  });
  it.each(invalid)("rejects %j", (f) => {
    expect(validateTopicFilter(f, 0)).toBe(false);
  });

  it("applies the level limit (to the inner filter of shared forms)", () => {
    expect(validateTopicFilter("a/+/#", 3)).toBe(true);
    expect(validateTopicFilter("a/+/c/#", 3)).toBe(false);
    expect(validateTopicFilter("$share/g/a/b/c", 3)).toBe(true);
    expect(validateTopicFilter("$share/g/a/b/c/d", 3)).toBe(false);
    expect(validateTopicFilter("$queue/a/b/c", 3)).toBe(true);
    expect(validateTopicFilter("$queue/a/b/c/d", 3)).toBe(false);
    expect(validateTopicFilter("a/b/c/d/e/f", 0)).toBe(true);
  });

  it("enforces the 65535-byte UTF-8 limit on the whole string", () => {
    expect(validateTopicFilter(`${"a".repeat(MAX_TOPIC_BYTES - 2)}/#`, 0)).toBe(true);
    expect(validateTopicFilter(`${"a".repeat(MAX_TOPIC_BYTES - 1)}/#`, 0)).toBe(false);
    expect(validateTopicFilter(`${"日".repeat(21844)}/+/`, 0)).toBe(true); // 65532 + 3
    expect(validateTopicFilter(`${"日".repeat(21844)}/+/a`, 0)).toBe(false);
    const prefix = "$share/g/"; // 9 bytes
    expect(validateTopicFilter(prefix + "a".repeat(MAX_TOPIC_BYTES - 9), 0)).toBe(true);
    expect(validateTopicFilter(prefix + "a".repeat(MAX_TOPIC_BYTES - 8), 0)).toBe(false);
  });
});

describe("isWildcard", () => {
  it.each([
    ["#", true],
    ["+", true],
    ["a/+", true],
    ["+/a", true],
    ["a/#", true],
    ["a/+/b", true],
    ["$share/g/a/+", true],
    ["a", false],
    ["a/b", false],
    ["", false],
    ["a+", false],
    ["a#", false],
    ["a/b+/c", false],
    ["$share/g/a", false],
  ] as const)("%j -> %s", (f, want) => {
    expect(isWildcard(f)).toBe(want);
  });
});

// MQTT 5.0 section 4.7 examples plus edge cases.
const MATCH_TABLE: Array<[string, string, boolean]> = [
  // 4.7.1.2 multi-level wildcard
  ["sport/tennis/player1/#", "sport/tennis/player1", true],
  ["sport/tennis/player1/#", "sport/tennis/player1/ranking", true],
  ["sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true],
  ["sport/tennis/player1/#", "sport/tennis/player2", false],
  ["sport/tennis/player1/#", "sport/tennis", false],
  ["sport/#", "sport", true],
  ["sport/#", "sport/", true],
  ["sport/#", "sports", false],
  ["sport/#", "sport/a/b/c", true],
  ["#", "sport", true],
  ["#", "/", true],
  ["#", "a/b/c", true],
  // 4.7.1.3 single-level wildcard
  ["sport/tennis/+", "sport/tennis/player1", true],
  ["sport/tennis/+", "sport/tennis/player2", true],
  ["sport/tennis/+", "sport/tennis/player1/ranking", false],
  ["sport/+", "sport", false],
  ["sport/+", "sport/", true],
  ["+", "sport", true],
  ["+", "/finance", false],
  ["+/+", "/finance", true],
  ["/+", "/finance", true],
  ["+/tennis/#", "sport/tennis/player1", true],
  ["+/tennis/#", "sport/tennis", true],
  ["+/tennis/#", "sport/golf", false],
  ["sport/+/player1", "sport/tennis/player1", true],
  ["sport/+/player1", "sport//player1", true],
  ["sport/+/player1", "sport/tennis/player2", false],
  ["+", "", true],
  ["+/+", "/", true],
  ["+", "/", false],
  ["+/#", "a", true],
  ["a/+/#", "a", false],
  ["a/+/#", "a/b", true],
  ["a/+/#", "a/", true],
  // 4.7.2 topics beginning with $ [MQTT-4.7.2-1]
  ["#", "$SYS/monitor/Clients", false],
  ["#", "$SYS", false],
  ["+", "$SYS", false],
  ["+/monitor/Clients", "$SYS/monitor/Clients", false],
  ["$SYS/#", "$SYS/monitor/Clients", true],
  ["$SYS/monitor/+", "$SYS/monitor/Clients", true],
  ["$SYS/#", "$SYS", true],
  ["a/#", "a/$b", true],
  ["a/+", "a/$b", true],
  ["+/a", "x$/a", true],
  // 4.7.3 topic semantic and usage
  ["ACCOUNTS", "Accounts", false],
  ["Accounts", "Accounts", true],
  ["Accounts payable", "Accounts payable", true],
  ["/finance", "finance", false],
  ["finance", "/finance", false],
  ["/finance", "/finance", true],
  // literal edge cases
  ["a/b", "a/b", true],
  ["a/b", "a/bc", false],
  ["a/bc", "a/b", false],
  ["a/b", "a/b/", false],
  ["a/b/", "a/b", false],
  ["a/b/", "a/b/", true],
  ["a//b", "a//b", true],
  ["a//b", "a/b", false],
  ["a/+/b", "a//b", true],
  ["", "", true],
  ["", "a", false],
  ["a", "", false],
];

describe("matchTopic", () => {
  it.each(MATCH_TABLE)("%j vs %j -> %s", (filter, topic, want) => {
    expect(matchTopic(filter, topic)).toBe(want);
  });
});

describe("parseSharedFilter", () => {
  it.each([
    ["$share/g/a/b", { group: "g", filter: "a/b" }],
    ["$share/g/#", { group: "g", filter: "#" }],
    ["$share/my-group/$SYS/+", { group: "my-group", filter: "$SYS/+" }],
    ["$share/g//", { group: "g", filter: "/" }],
    ["$queue/t", { group: "$queue", filter: "t" }],
    ["$queue/a/+/#", { group: "$queue", filter: "a/+/#" }],
  ] as const)("%j", (f, want) => {
    expect(parseSharedFilter(f)).toEqual(want);
  });
  it.each([
    "a/b",
    "#",
    "$SYS/#",
    "$share",
    "$queue",
    "$sharex/g/a",
    "$share/g",
    "$share//x",
    "$share/g/",
    "$share/+/x",
    "$queue/",
    "",
  ])("%j -> null", (f) => {
    expect(parseSharedFilter(f)).toBeNull();
  });
});

describe("topicLevels", () => {
  it.each([
    ["", 1],
    ["a", 1],
    ["/", 2],
    ["a/b", 2],
    ["a/b/c", 3],
    ["/a/", 3],
    ["a//b", 3],
  ] as const)("%j -> %d", (t, n) => {
    expect(topicLevels(t)).toBe(n);
  });
});

describe("utf8ByteLength", () => {
  it("agrees with Buffer.byteLength", () => {
    for (const s of ["", "abc", "é", "日本", "😀", "a😀b", "\ud800", "\udc00x", "x\ud800"]) {
      expect(utf8ByteLength(s)).toBe(Buffer.byteLength(s, "utf8"));
    }
  });
});
