import { describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/index.ts";
import { useTempDir } from "./temp-dir.ts";

const tmp = useTempDir();

describe("Config.listeners", () => {
  it("lists the four default listeners, tcp, ssl, ws, wss", () => {
    const ls = loadConfig({}).listeners();
    expect(ls.map((l) => [l.protocol, l.name, l.bind.host, l.bind.port])).toEqual([
      ["mqtt:tcp", "external", "0.0.0.0", 1883],
      ["mqtt:ssl", "external", "0.0.0.0", 8883],
      ["mqtt:ws", "external", "0.0.0.0", 8083],
      ["mqtt:wss", "external", "0.0.0.0", 8084],
    ]);
    expect(ls[0]).toMatchObject({
      kind: "tcp",
      acceptors: 8,
      maxConnections: 1_024_000,
      maxConnRate: 1000,
      zone: "external",
      backlog: 1024,
      nodelay: true,
    });
    expect(ls[1]).toMatchObject({
      acceptors: 16,
      maxConnections: 102_400,
      maxConnRate: 500,
      verify: "verify_none",
      failIfNoPeerCert: false,
      tlsVersions: ["tlsv1.3", "tlsv1.2"],
      handshakeTimeout: 15_000,
    });
    expect(ls[1].keyfile).toBeUndefined();
    expect(ls[1].ciphers).toBeUndefined();
    expect(ls[2]).toMatchObject({ acceptors: 4, mqttPath: "/mqtt" });
  });

  it("drops a listener set to off and allows port 0", () => {
    const ls = loadConfig({
      overrides: {
        "listener.ssl.external": "off",
        "listener.ws.external": "off",
        "listener.wss.external": "off",
        "listener.tcp.external": "127.0.0.1:0",
      },
    }).listeners();
    expect(ls).toHaveLength(1);
    expect(ls[0].bind).toEqual({ host: "127.0.0.1", port: 0 });
  });

  it("adds listeners by new names, sorted by kind then name", () => {
    const file = tmp.write(
      "svc.conf",
      [
        "listener.ws.b = 0",
        "listener.tcp.internal = 127.0.0.1:11883",
        "listener.tcp.internal.zone = internal",
        "listener.tcp.internal.max_connections = 10",
        "listener.ws.b.mqtt_path = /ws",
        'listener.wss.external.tls_versions = "tlsv1.3"',
      ].join("\n"),
    );
    const ls = loadConfig({ file });
    expect(ls.listeners().map((l) => `${l.kind}.${l.name}`)).toEqual([
      "tcp.external",
      "tcp.internal",
      "ssl.external",
      "ws.b",
      "ws.external",
      "wss.external",
    ]);
    const internal = ls.listeners()[1];
    expect(internal).toMatchObject({ zone: "internal", maxConnections: 10, bind: { host: "127.0.0.1", port: 11883 } });
    expect(ls.listeners()[3].mqttPath).toBe("/ws");
    expect(ls.listeners()[5].tlsVersions).toEqual(["tlsv1.3"]);
    expect(ls.get("listener.tcp.internal")).toEqual({ host: "127.0.0.1", port: 11883 });
  });

  it("reads TLS options and checks the files exist", () => {
    const key = tmp.write("key.pem", "k");
    const cert = tmp.write("cert.pem", "c");
    const ssl = loadConfig({
      overrides: {
        "listener.ssl.external.keyfile": key,
        "listener.ssl.external.certfile": cert,
        "listener.ssl.external.verify": "verify_peer",
        "listener.ssl.external.fail_if_no_peer_cert": "true",
        "listener.ssl.external.ciphers": "TLS_AES_256_GCM_SHA384, TLS_AES_128_GCM_SHA256",
      },
    }).listeners()[1];
    expect(ssl).toMatchObject({
      keyfile: key,
      certfile: cert,
      verify: "verify_peer",
      failIfNoPeerCert: true,
      ciphers: ["TLS_AES_256_GCM_SHA384", "TLS_AES_128_GCM_SHA256"],
    });
    expect(() => loadConfig({ overrides: { "listener.wss.external.cacertfile": `${cert}.missing` } })).toThrow(
      `command line: listener.wss.external.cacertfile: file not found: ${cert}.missing`,
    );
    expect(() => loadConfig({ overrides: { "listener.ssl.external.tls_versions": "sslv3" } })).toThrow(
      /invalid value "sslv3"/,
    );
  });

  it("rejects options of other kinds, of undefined listeners and clashing ports", () => {
    expect(() => loadConfig({ overrides: { "listener.tcp.external.mqtt_path": "/x" } })).toThrow(
      "command line: listener.tcp.external.mqtt_path: applies to ws, wss listeners only",
    );
    expect(() => loadConfig({ overrides: { "listener.tcp.external.keyfile": "k.pem" } })).toThrow(
      /applies to ssl, wss listeners only/,
    );
    expect(() => loadConfig({ env: { SVC_LISTENER__TCP__NOPE__ACCEPTORS: "2" } })).toThrow(
      "environment SVC_LISTENER__TCP__NOPE__ACCEPTORS: listener.tcp.nope.acceptors: no listener listener.tcp.nope is defined",
    );
    expect(() => loadConfig({ overrides: { "listener.ws.external": "127.0.0.1:1883" } })).toThrow(
      "command line: listener.ws.external: port 1883 is already used by listener.tcp.external",
    );
    expect(() => loadConfig({ overrides: { "dashboard.listener.http": "8081" } })).toThrow(
      /dashboard\.listener\.http: port 8081 is already used by management\.listener\.http/,
    );
  });

  it("lets disabled listeners and port 0 share", () => {
    const c = loadConfig({
      overrides: {
        "listener.tcp.external": "0",
        "listener.ws.external": "0",
        "listener.ssl.external": "off",
        "listener.tcp.other": "8883",
      },
    });
    expect(c.listeners().map((l) => l.bind.port)).toEqual([0, 8883, 0, 8084]);
  });

  it("lists every listener with its applicable options in entries()", () => {
    const keys = loadConfig({ overrides: { "listener.tcp.external": "off" } })
      .entries()
      .map((e) => e.key)
      .filter((k) => k.startsWith("listener."));
    expect(keys).toContain("listener.tcp.external");
    expect(keys).toContain("listener.tcp.external.acceptors");
    expect(keys).not.toContain("listener.tcp.external.mqtt_path");
    expect(keys).toContain("listener.ws.external.mqtt_path");
    expect(keys).toContain("listener.wss.external.keyfile");
  });
});
