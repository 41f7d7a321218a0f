// The ACL rule file: both forms (the family's Erlang terms and the spec's line form) give the same
// rules; identities (all, user, client, ipaddr CIDR, ipaddrs, and/or), topics (wildcards, %u/%c,
// the exact marker), first match wins; every problem named with file:line. Matching is checked on
// the compiled rules with made-up clients (IPv6 and addresses a test cannot connect from).

import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { compileRules, feedVars, firstMatch } from "../../src/auth/acl.ts";
import { AclFileError, type AclRule, parseAclText, readAclFile } from "../../src/auth/acl-file.ts";
import type { ClientInfo } from "../../src/broker/types.ts";
import { clientInfo } from "../helpers/client-info.ts";

const root = fileURLToPath(new URL("../../", import.meta.url));

function client(o: Partial<ClientInfo> = {}): ClientInfo {
  return clientInfo({ peerHost: "10.1.2.3", ...o });
}

/** The permission of the first matching rule, "nomatch" when none matches. */
function decide(rules: AclRule[], c: ClientInfo, action: "publish" | "subscribe", topic: string): string {
  return firstMatch(compileRules(rules), c, action, topic)?.rule.permission ?? "nomatch";
}

const strip = (rules: AclRule[]) => rules.map(({ source: _s, ...r }) => r);

describe("ACL file forms", () => {
  it("the shipped etc/acl.conf parses into the default rules", () => {
    const rules = readAclFile(`${root}etc/acl.conf`);
    expect(rules.map((r) => [r.permission, r.who.kind, r.access])).toEqual([
      ["allow", "user", "subscribe"],
      ["allow", "ipaddr", "pubsub"],
      ["deny", "all", "subscribe"],
      ["allow", "all", "pubsub"],
    ]);
    expect(rules[0].source).toMatch(/etc\/acl\.conf:\d+$/);
    const local = client({ peerHost: "127.0.0.1" });
    expect(decide(rules, local, "subscribe", "$SYS/#")).toBe("allow");
    expect(decide(rules, client({ peerHost: "::1" }), "subscribe", "$SYS/brokers/+/uptime")).toBe("allow");
    expect(decide(rules, client(), "subscribe", "$SYS/#")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "#")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "a/#")).toBe("allow");
    expect(decide(rules, client({ username: "dashboard" }), "subscribe", "$SYS/brokers")).toBe("allow");
    expect(decide(rules, client({ username: "dashboard" }), "publish", "$SYS/x")).toBe("allow");
  });

  it("the line form shown in etc/acl.conf's header says what its Erlang rules say", () => {
    const text = readFileSync(`${root}etc/acl.conf`, "utf8");
    const example = text
      .split("\n")
      .filter((l) => /^%%\s+(Allow|Deny) /.test(l))
      .map((l) => l.replace(/^%%\s+/, ""))
      .join("\n");
    expect(strip(parseAclText(example, "header"))).toEqual(strip(parseAclText(text, "acl.conf")));
  });

  it("the line form gives the same rules as the Erlang terms", () => {
    const erlang = parseAclText(
      `%% comment
{allow, {user, "dashboard"}, subscribe, ["$SYS/#"]}.
{allow, {ipaddrs, ["127.0.0.1", "::1"]}, pubsub, ["$SYS/#", "#"]}.
{deny, all, subscribe, ["$SYS/#", {eq, "#"}]}.
{deny, {'and', [{client, "c 1"}, {'or', [{user, all}, {ipaddr, "10.0.0.0/8"}]}]}, publish, ["a,b", "eq x/#"]}.
{allow, all}.
`,
      "erl.conf",
    );
    const line = parseAclText(
      `# comment
Allow user dashboard Subscribe $SYS/#
allow ipaddrs 127.0.0.1,::1 PUBSUB $SYS/# #
Deny all subscribe $SYS/#, eq #
  % another comment
DENY and(client "c 1", or(user all, ipaddr 10.0.0.0/8)) Publish "a,b" eq x/#
Allow all
`,
      "line.conf",
    );
    expect(strip(line)).toEqual(strip(erlang));
    expect(line.map((r) => r.source)).toEqual([
      "line.conf:2",
      "line.conf:3",
      "line.conf:4",
      "line.conf:6",
      "line.conf:7",
    ]);
    expect(erlang[4].topics).toBe("all");
  });

  it("both forms may be mixed; terms may span lines; binaries read as strings", () => {
    const rules = parseAclText(
      `Deny client bad pubsub #
{allow,
   {user, <<"u">>},   % spread over lines
   publish, [<<"t/1">>]}.
Allow all`,
      "mixed.conf",
    );
    expect(rules.map((r) => r.source)).toEqual(["mixed.conf:1", "mixed.conf:2", "mixed.conf:5"]);
    expect(rules[1].who).toEqual({ kind: "user", name: "u" });
  });

  it.each([
    ["{allow, all}\n", 'x.conf:2: expected "." after the rule'],
    ['{allow, {user, "a"}, subscribe, ["t"]}.\n{allow, {nobody, "x"}, publish, ["t"]}.\n', "x.conf:2: unknown Who"],
    ['{permit, all, publish, ["t"]}.', "x.conf:1: a rule starts with allow or deny"],
    ['{allow, all, write, ["t"]}.', "x.conf:1: access must be subscribe, publish or pubsub"],
    ['{allow, {ipaddr, "10.0.0.0/33"}, publish, ["t"]}.', 'x.conf:1: invalid prefix length in "10.0.0.0/33"'],
    ["{allow, all, publish, []}.", "x.conf:1: the topic list is empty"],
    ['{allow, {user, "a}, publish, ["t"]}.', "x.conf:1: "],
    ["\n\nPermit all", 'x.conf:3: a rule starts with Allow or Deny, got "Permit"'],
    ["Allow user", "x.conf:1: user needs a name after it"],
    ["Allow ipaddr 300.1.1.1 publish t", 'x.conf:1: invalid IP address "300.1.1.1"'],
    ["Allow all write t", "x.conf:1: expected Subscribe, Publish or pubsub"],
    ["Allow client c publish", "x.conf:1: expected one or more topics"],
    ["Allow and(user a publish t", 'x.conf:1: expected "," or ")"'],
    ['Allow user "a publish t', "x.conf:1: missing closing quote"],
    ["Allow all publish eq", "x.conf:1: eq needs a topic"],
  ])("reports %j as %s", (text, message) => {
    let err: unknown;
    try {
      parseAclText(text, "x.conf");
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(AclFileError);
    expect((err as AclFileError).issues[0]).toContain(message);
  });

  it("reports every bad line at once, and a missing file by name", () => {
    const err = (() => {
      try {
        parseAclText("Allow all\nNope\nAllow all write x\nAllow all", "f.conf");
      } catch (e) {
        return e as AclFileError;
      }
    })();
    expect(err?.issues.map((i) => i.split(": ")[0])).toEqual(["f.conf:2", "f.conf:3"]);
    expect(() => readAclFile("/nonexistent/acl.conf")).toThrow(/\/nonexistent\/acl\.conf: cannot read the ACL file/);
  });
});

describe("ACL matching", () => {
  it("first match wins: an earlier allow beats a later deny and the other way round", () => {
    const rules = parseAclText(
      "Allow client c1 publish a/#\nDeny all publish a/#\nDeny client c1 publish b/#\nAllow all",
      "o",
    );
    expect(decide(rules, client(), "publish", "a/1")).toBe("allow");
    expect(decide(rules, client({ clientId: "c2" }), "publish", "a/1")).toBe("deny");
    expect(decide(rules, client(), "publish", "b/1")).toBe("deny");
    expect(decide(rules, client(), "publish", "c")).toBe("allow");
  });

  it("access: subscribe, publish or pubsub", () => {
    const rules = parseAclText("Deny all subscribe s\nDeny all publish p\nDeny all pubsub b", "a");
    expect(decide(rules, client(), "subscribe", "s")).toBe("deny");
    expect(decide(rules, client(), "publish", "s")).toBe("nomatch");
    expect(decide(rules, client(), "publish", "p")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "p")).toBe("nomatch");
    expect(decide(rules, client(), "publish", "b")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "b")).toBe("deny");
  });

  it("wildcards in rules match topics and the levels of subscribed filters", () => {
    const rules = parseAclText("Allow all pubsub a/+/c s/#", "w");
    expect(decide(rules, client(), "publish", "a/b/c")).toBe("allow");
    expect(decide(rules, client(), "publish", "a/b/d")).toBe("nomatch");
    expect(decide(rules, client(), "subscribe", "a/+/c")).toBe("allow");
    expect(decide(rules, client(), "subscribe", "s")).toBe("allow");
    expect(decide(rules, client(), "subscribe", "s/x/#")).toBe("allow");
    expect(decide(rules, client(), "subscribe", "#")).toBe("nomatch");
  });

  it("the exact marker matches only the literal filter", () => {
    const rules = parseAclText('{deny, all, subscribe, [{eq, "#"}, "eq t/+"]}.', "e");
    expect(decide(rules, client(), "subscribe", "#")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "a/#")).toBe("nomatch");
    expect(decide(rules, client(), "subscribe", "t/+")).toBe("deny");
    expect(decide(rules, client(), "subscribe", "t/x")).toBe("nomatch");
  });

  it("%u and %c stand for whole levels; a missing or unsafe value cannot match", () => {
    const rules = parseAclText("Allow all publish users/%u/# clients/%c\nDeny all publish #", "p");
    const alice = client({ username: "alice", clientId: "dev1" });
    expect(decide(rules, alice, "publish", "users/alice/x")).toBe("allow");
    expect(decide(rules, alice, "publish", "users/bob/x")).toBe("deny");
    expect(decide(rules, alice, "publish", "clients/dev1")).toBe("allow");
    expect(decide(rules, alice, "publish", "clients/dev2")).toBe("deny");
    expect(decide(rules, client({ username: undefined }), "publish", "users/%u/x")).toBe("deny");
    expect(decide(rules, client({ username: "#" }), "publish", "users/anything/x")).toBe("deny");
    expect(feedVars("a/%u%c/%c", alice)).toBe("a/%u%c/dev1");
  });

  it("ipaddr takes an address or a CIDR block, IPv4 and IPv6; ipaddrs a list", () => {
    const rules = parseAclText(
      "Allow ipaddr 10.0.0.0/8 publish a\nAllow ipaddr 2001:db8::/32 publish a\nAllow ipaddrs 192.168.1.7,172.16.0.0/12 publish b",
      "i",
    );
    expect(decide(rules, client({ peerHost: "10.200.0.1" }), "publish", "a")).toBe("allow");
    expect(decide(rules, client({ peerHost: "::ffff:10.0.0.1" }), "publish", "a")).toBe("allow");
    expect(decide(rules, client({ peerHost: "11.0.0.1" }), "publish", "a")).toBe("nomatch");
    expect(decide(rules, client({ peerHost: "2001:db8:1::5" }), "publish", "a")).toBe("allow");
    expect(decide(rules, client({ peerHost: "2001:db9::5" }), "publish", "a")).toBe("nomatch");
    expect(decide(rules, client({ peerHost: "192.168.1.7" }), "publish", "b")).toBe("allow");
    expect(decide(rules, client({ peerHost: "192.168.1.8" }), "publish", "b")).toBe("nomatch");
    expect(decide(rules, client({ peerHost: "172.31.255.255" }), "publish", "b")).toBe("allow");
  });

  it("and / or combine identities; user all and client all match anyone", () => {
    const rules = parseAclText(
      "Allow and(user u, ipaddr 10.0.0.0/8) publish x\nAllow or(client c9, user v) publish y\nAllow user all publish z",
      "ao",
    );
    expect(decide(rules, client({ username: "u" }), "publish", "x")).toBe("allow");
    expect(decide(rules, client({ username: "u", peerHost: "1.1.1.1" }), "publish", "x")).toBe("nomatch");
    expect(decide(rules, client({ clientId: "c9" }), "publish", "y")).toBe("allow");
    expect(decide(rules, client({ username: "v" }), "publish", "y")).toBe("allow");
    expect(decide(rules, client(), "publish", "y")).toBe("nomatch");
    expect(decide(rules, client(), "publish", "z")).toBe("allow");
  });

  it("an unchanged shipped file reads the same from disk each time", () => {
    const text = readFileSync(`${root}etc/acl.conf`, "utf8");
    expect(strip(parseAclText(text, "a"))).toEqual(strip(readAclFile(`${root}etc/acl.conf`)));
  });
});
