// The key layout (keys.ts) and key order helpers (key-order.ts).

import { describe, expect, it } from "vitest";
import { compareKeys, prefixRangeEnd } from "../../src/cluster/key-order.ts";
import { ClusterKeys, decodeSegment, encodeSegment } from "../../src/cluster/keys.ts";

describe("ClusterKeys", () => {
  const k = new ClusterKeys("svccl", "svccl");

  it("puts every key under <prefix>/<cluster>/", () => {
    expect(k.root).toBe("svccl/svccl/");
    expect(new ClusterKeys("/svc/", "prod").root).toBe("/svc/prod/");
    expect(k.node("svc@10.0.0.1")).toBe("svccl/svccl/nodes/svc@10.0.0.1");
    expect(k.rule("rule:1")).toBe("svccl/svccl/rules/rule:1");
    expect(k.resource("resource:9")).toBe("svccl/svccl/resources/resource:9");
    expect(k.ban("clientid", "bad")).toBe("svccl/svccl/banned/clientid/bad");
    expect(k.app("admin")).toBe("svccl/svccl/apps/admin");
    expect(k.user("admin")).toBe("svccl/svccl/users/admin");
    expect(k.authClientid("c1")).toBe("svccl/svccl/auth/clientid/c1");
    expect(k.authUsername("u1")).toBe("svccl/svccl/auth/username/u1");
    expect(k.aclRule("username", "u1", "t/#")).toBe("svccl/svccl/acl/username/u1/t%2F#");
    expect(k.aclRule("all", undefined, "$SYS/#")).toBe("svccl/svccl/acl/all/$SYS%2F#");
    expect(k.client("c/1")).toBe("svccl/svccl/clients/c%2F1");
  });

  it("keeps one filter's routes apart from longer filters sharing its start", () => {
    expect(k.route("a/+/c", "svc@h1")).toBe("svccl/svccl/routes/a%2F+%2Fc/svc@h1");
    expect(k.route("a/b", "n").startsWith(k.routesOf("a"))).toBe(false);
    expect(k.parseRoute(k.route("/a//#", "svc@h1"))).toEqual({ filter: "/a//#", node: "svc@h1" });
    expect(k.parseRoute(k.route("100%/x", "n"))).toEqual({ filter: "100%/x", node: "n" });
    expect(k.parseRoute("svccl/svccl/rules/x")).toBeUndefined();
  });

  it("reads a name back from a key", () => {
    expect(k.leaf(k.ban("username", "a/b%2F"), k.banned())).toBe("a/b%2F");
    expect(k.leaf(k.node("svc@h"), k.nodes())).toBe("svc@h");
    expect(k.leaf("elsewhere/x", k.nodes())).toBeUndefined();
  });

  it("segment encoding round-trips any name", () => {
    for (const s of ["", "/", "%", "%2F", "a/b%c", "$share/g/t/#", "ü/\u{1F600}"]) {
      expect(encodeSegment(s)).not.toContain("/");
      expect(decodeSegment(encodeSegment(s))).toBe(s);
    }
  });
});

describe("key order", () => {
  it("compares as UTF-8 bytes do", () => {
    const keys = ["a", "B", "\u{1F600}", "\uFFFD", "ab", "", "\u00e9", "a/b", "a0"];
    const byBytes = [...keys].sort((x, y) => Buffer.compare(Buffer.from(x), Buffer.from(y)));
    expect([...keys].sort(compareKeys)).toEqual(byBytes);
  });

  it("ends a prefix range at the next prefix", () => {
    expect(prefixRangeEnd(Buffer.from("a/")).toString()).toBe("a0");
    expect([...prefixRangeEnd(Buffer.from([0x61, 0xff]))]).toEqual([0x62]);
    expect([...prefixRangeEnd(Buffer.alloc(0))]).toEqual([0]);
  });
});
