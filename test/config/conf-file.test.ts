import { describe, expect, it } from "vitest";
import { parseConfFile } from "../../src/config/conf-file.ts";

const values = (text: string): Record<string, string> =>
  Object.fromEntries(parseConfFile(text, "t.conf").assignments.map((a) => [a.key, a.raw]));

describe("parseConfFile", () => {
  it("reads key = value lines and skips comments and blank lines", () => {
    const text = [
      "## heading",
      "# node.name = ignored@host",
      "",
      "   ",
      "node.name = svc@10.0.0.1",
      "log.level=info",
    ].join("\n");
    expect(values(text)).toEqual({ "node.name": "svc@10.0.0.1", "log.level": "info" });
  });

  it("records the file and line of each setting", () => {
    const { assignments } = parseConfFile("# c\n\nlog.level = info\r\nlog.to = file\n", "etc/svc.conf");
    expect(assignments.map((a) => [a.key, a.source, a.origin])).toEqual([
      ["log.level", "etc/svc.conf:3", "etc/svc.conf:3"],
      ["log.to", "etc/svc.conf:4", "etc/svc.conf:4"],
    ]);
  });

  it("drops trailing comments after whitespace but keeps # inside a value", () => {
    expect(values("log.level = info # the default is warning\nnode.cookie = a#b\tx\ncluster.name = c\t# tab")).toEqual({
      "log.level": "info",
      "node.cookie": "a#b\tx",
      "cluster.name": "c",
    });
  });

  it("reads double-quoted values with escapes, spaces and #", () => {
    const text = [
      'mqtt.response_information = "  resp # not a comment "',
      'node.cookie = "say \\"hi\\" \\\\ done"  # comment',
      'cluster.name = ""',
      "dashboard.default_user.password = p=ss",
    ].join("\n");
    expect(values(text)).toEqual({
      "mqtt.response_information": "  resp # not a comment ",
      "node.cookie": 'say "hi" \\ done',
      "cluster.name": "",
      "dashboard.default_user.password": "p=ss",
    });
  });

  it("keeps an empty value as the empty string", () => {
    expect(values("mqtt.response_information =")).toEqual({ "mqtt.response_information": "" });
  });

  it("reports syntax errors with file and line", () => {
    const { issues, assignments } = parseConfFile(
      'ok.key = 1\njust text\n= value\nbad key = 1\nq = "open\nr = "a" b',
      "f.conf",
    );
    expect(assignments.map((a) => a.key)).toEqual(["ok.key"]);
    expect(issues).toEqual([
      'f.conf:2: syntax error: expected "key = value", got "just text"',
      'f.conf:3: syntax error: expected "key = value", got "= value"',
      'f.conf:4: syntax error: expected "key = value", got "bad key = 1"',
      "f.conf:5: q: missing closing quote",
      "f.conf:6: r: unexpected text after the closing quote: b",
    ]);
  });
});
