import { describe, expect, expectTypeOf, it } from "vitest";
import type { Bind, ConfigValue, ListenerConfig, ZoneConfig } from "../../src/config/index.ts";
import { loadConfig, SCHEMA, type SchemaEntry } from "../../src/config/index.ts";
import { defaultText, matchKey } from "../../src/config/key-match.ts";
import { parseEntry } from "../../src/config/parse-entry.ts";

const entries = Object.entries<SchemaEntry>(SCHEMA);

describe("schema", () => {
  it("describes every key in one sentence", () => {
    for (const [key, e] of entries) {
      expect(e.description, key).toMatch(/^[A-Z$].*\.$/);
      expect(e.description.slice(0, -1), key).not.toMatch(/\. [A-Z]/);
    }
  });

  it("has defaults that parse, for every placeholder value that has its own", () => {
    for (const [key, e] of entries) {
      for (const text of [e.default, ...Object.values(e.defaultFor ?? {})]) {
        if (text === undefined) continue;
        const r = parseEntry(e, text, "/");
        expect(r.ok ? "ok" : `${key}: ${r.error}`).toBe("ok");
      }
    }
  });

  it("gives fallback keys the same type and bounds as the key they fall back to", () => {
    for (const [key, e] of entries) {
      if (e.fallback === undefined) continue;
      const target = (SCHEMA as Record<string, SchemaEntry>)[e.fallback];
      expect(target, key).toBeDefined();
      expect([e.type, e.min, e.max, e.values], key).toEqual([target.type, target.min, target.max, target.values]);
      expect(e.default, `${key} has a fallback and a default`).toBeUndefined();
    }
  });

  it("matches concrete keys to entries and their placeholders", () => {
    expect(matchKey("zone.external.max_inflight")).toMatchObject({
      schemaKey: "zone.$zone.max_inflight",
      params: { zone: "external" },
    });
    expect(matchKey("listener.wss.a-1.keyfile")).toMatchObject({ params: { kind: "wss", name: "a-1" } });
    expect(matchKey("listener.tcp.external")?.schemaKey).toBe("listener.tcp.external");
    expect(matchKey("listener.tcp.other")?.schemaKey).toBe("listener.$kind.$name");
    expect(matchKey("listener.udp.a")).toBeUndefined();
    expect(matchKey("zone.a.b.max_inflight")).toBeUndefined();
    const m = matchKey("listener.ssl.x.acceptors");
    expect(m && defaultText(m)).toBe("16");
  });

  it("maps keys to value types", () => {
    const c = loadConfig({});
    expectTypeOf(c.get("mqtt.max_packet_size")).toEqualTypeOf<number>();
    expectTypeOf(c.get("allow_anonymous")).toEqualTypeOf<boolean>();
    expectTypeOf(c.get("cluster.discovery")).toEqualTypeOf<"manual" | "static" | "etcd" | "k8s">();
    expectTypeOf(c.get("cluster.static.seeds")).toEqualTypeOf<string[]>();
    expectTypeOf(c.get("listener.tcp.external")).toEqualTypeOf<Bind | null>();
    expectTypeOf(c.get("listener.tcp.mine")).toEqualTypeOf<Bind | null | undefined>();
    expectTypeOf(c.get("listener.ssl.external.keyfile")).toEqualTypeOf<string | undefined>();
    expectTypeOf(c.get("listener.ws.external.acceptors")).toEqualTypeOf<number>();
    expectTypeOf(c.get("listener.wss.external.tls_versions")).toEqualTypeOf<
      ("tlsv1.3" | "tlsv1.2" | "tlsv1.1" | "tlsv1")[]
    >();
    expectTypeOf(c.get("zone.edge.acl_deny_action")).toEqualTypeOf<"ignore" | "disconnect">();
    expectTypeOf(c.get("zone.edge.max_packet_size")).toEqualTypeOf<number>();
    expectTypeOf<ConfigValue<"management.listener.http">>().toEqualTypeOf<Bind | null>();
    expectTypeOf<ZoneConfig["maxInflight"]>().toEqualTypeOf<number>();
    expectTypeOf<ZoneConfig["aclDenyAction"]>().toEqualTypeOf<"ignore" | "disconnect">();
    expectTypeOf<ListenerConfig["verify"]>().toEqualTypeOf<"verify_peer" | "verify_none">();
    // @ts-expect-error: not a key
    expect(() => c.get("mqtt.max_qos_alowed")).toThrow();
    // @ts-expect-error: udp is not a listener kind
    expect(() => c.get("listener.udp.external")).toThrow();
  });
});
