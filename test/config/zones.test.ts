import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";

describe("Config.zone", () => {
  it("gives the external zone its defaults, durations in ms and sizes in bytes", () => {
    const z = loadConfig({}).zone("external");
    expect(z).toMatchObject({
      name: "external",
      idleTimeout: 15_000,
      enableAcl: true,
      enableBan: true,
      enableStats: true,
      aclDenyAction: "ignore",
      keepaliveBackoff: 0.75,
      maxSubscriptions: 0,
      upgradeQos: false,
      maxInflight: 32,
      retryInterval: 30_000,
      maxAwaitingRel: 100,
      awaitRelTimeout: 300_000,
      sessionExpiryInterval: 7_200_000,
      maxMqueueLen: 1000,
      mqueueStoreQos0: true,
      useUsernameAsClientid: false,
      ignoreLoopDeliver: false,
      bypassAuthPlugins: false,
      serverKeepalive: 0,
      maxPacketSize: 1_048_576,
      maxClientidLen: 65535,
      maxTopicAlias: 65535,
      maxTopicLevels: 128,
      maxQosAllowed: 2,
      retainAvailable: true,
      wildcardSubscription: true,
      sharedSubscription: true,
      allowAnonymous: true,
    });
  });

  it("gives the internal zone its own defaults", () => {
    const z = loadConfig({ overrides: { allow_anonymous: "false" } }).zone("internal");
    expect(z).toMatchObject({
      enableAcl: false,
      maxInflight: 128,
      maxAwaitingRel: 1000,
      maxMqueueLen: 10000,
      mqueueStoreQos0: true,
      bypassAuthPlugins: true,
      allowAnonymous: true,
    });
  });

  it("falls back to the global keys when a zone option is unset", () => {
    const c = loadConfig({
      overrides: {
        "mqtt.max_packet_size": "64KB",
        "mqtt.max_qos_allowed": "1",
        "mqtt.server_keepalive": "60",
        "mqtt.response_information": "resp/",
        acl_deny_action: "disconnect",
        allow_anonymous: "false",
        "zone.internal.max_packet_size": "2MB",
      },
    });
    const ext = c.zone("external");
    expect(ext.maxPacketSize).toBe(64 * 1024);
    expect(ext.maxQosAllowed).toBe(1);
    expect(ext.serverKeepalive).toBe(60);
    expect(ext.responseInformation).toBe("resp/");
    expect(ext.aclDenyAction).toBe("disconnect");
    expect(ext.allowAnonymous).toBe(false);
    expect(c.zone("internal").maxPacketSize).toBe(2 * 1024 * 1024);
    expect(c.zone("internal").maxQosAllowed).toBe(1);
    expect(c.get("zone.external.max_packet_size")).toBe(64 * 1024);
    const row = c.entries().find((e) => e.key === "zone.external.max_packet_size");
    expect(row).toMatchObject({ value: 65536, source: "cli", inheritedFrom: "mqtt.max_packet_size" });
  });

  it("resolves any other zone name with the general defaults", () => {
    const c = loadConfig({ overrides: { "zone.edge.max_inflight": "8", "zone.edge.session_expiry_interval": "90" } });
    expect(c.zone("edge")).toMatchObject({
      name: "edge",
      maxInflight: 8,
      sessionExpiryInterval: 90_000,
      enableAcl: true,
    });
    expect(c.zone("nobody-set-this").maxInflight).toBe(32);
    expect(() => c.zone("a.b")).toThrow(/invalid zone name/);
  });

  it("validates zone options like the global ones", () => {
    expect(() => loadConfig({ overrides: { "zone.external.max_qos_allowed": "3" } })).toThrow(
      'command line: zone.external.max_qos_allowed: integer "3" out of range (0..2)',
    );
    expect(() => loadConfig({ overrides: { "zone.external.keepalive_backoff": "0.1" } })).toThrow(/out of range/);
  });

  it("lists every zone in use in entries()", () => {
    const c = loadConfig({ overrides: { "listener.tcp.edge": "0", "listener.tcp.edge.zone": "edge" } });
    const zones = new Set(
      c
        .entries()
        .filter((e) => e.key.startsWith("zone."))
        .map((e) => e.key.split(".")[1]),
    );
    expect([...zones]).toEqual(["external", "internal", "edge"]);
  });
});
