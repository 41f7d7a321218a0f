import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError, envName, loadConfig } from "../../src/config/index.ts";
import { useTempDir } from "./temp-dir.ts";

const tmp = useTempDir();

/** The ConfigError that `fn` throws. */
function configError(fn: () => unknown): ConfigError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ConfigError) return e;
    throw e;
  }
  throw new Error("expected a ConfigError");
}

describe("loadConfig layers", () => {
  it("uses the schema defaults with no file", () => {
    const c = loadConfig({ cwd: "/srv/svc" });
    expect(c.get("node.name")).toBe("svc@127.0.0.1");
    expect(c.get("mqtt.max_packet_size")).toBe(1024 * 1024);
    expect(c.get("broker.sys_interval")).toBe(60_000);
    expect(c.get("cluster.discovery")).toBe("manual");
    expect(c.get("node.data_dir")).toBe("/srv/svc/data");
    expect(c.get("acl_file")).toBe("/srv/svc/etc/acl.conf");
  });

  it("applies file, then environment, then CLI overrides", () => {
    const file = tmp.write("svc.conf", "log.level = info\nlog.to = file\nnode.name = a@h1\n");
    const c = loadConfig({
      file,
      env: { SVC_LOG__TO: "both", SVC_NODE__NAME: "b@h2", PATH: "/usr/bin" },
      overrides: { "node.name": "c@h3" },
    });
    expect(c.get("log.level")).toBe("info");
    expect(c.get("log.to")).toBe("both");
    expect(c.get("node.name")).toBe("c@h3");
    const source = (key: string) => c.entries().find((e) => e.key === key)?.source;
    expect(source("log.level")).toBe(`${file}:1`);
    expect(source("log.to")).toBe("env");
    expect(source("node.name")).toBe("cli");
    expect(source("log.dir")).toBe("default");
  });

  it("maps SVC_ variables with __ for dots", () => {
    const c = loadConfig({
      env: {
        SVC_LISTENER__TCP__EXTERNAL: "127.0.0.1:21883",
        SVC_ZONE__EXTERNAL__MAX_INFLIGHT: "64",
        SVC_ALLOW_ANONYMOUS: "false",
      },
    });
    expect(c.get("listener.tcp.external")).toEqual({ host: "127.0.0.1", port: 21883 });
    expect(c.zone("external").maxInflight).toBe(64);
    expect(c.get("allow_anonymous")).toBe(false);
    expect(envName("mqtt.max_qos_allowed")).toBe("SVC_MQTT__MAX_QOS_ALLOWED");
  });

  it("resets a key to its default with an empty variable", () => {
    const file = tmp.write("svc.conf", "log.level = debug\n");
    expect(loadConfig({ file, env: { SVC_LOG__LEVEL: "" } }).get("log.level")).toBe("info");
  });

  it("reads the file named by SVC_CONFIG when no file is given", () => {
    const file = tmp.write("other.conf", "cluster.name = other\n");
    expect(loadConfig({ env: { SVC_CONFIG: file } }).get("cluster.name")).toBe("other");
  });

  it("ignores the allow-listed non-key variables and unrelated variables", () => {
    expect(() => loadConfig({ env: { SVC_LOG_FORMAT: "json", HOME: "/root", SVC: "x" } })).not.toThrow();
  });

  it("resolves relative paths against cwd", () => {
    tmp.write("key.pem", "k");
    const c = loadConfig({
      cwd: tmp.dir(),
      overrides: { "listener.ssl.external.keyfile": "key.pem", "node.data_dir": "var/data", "log.dir": "/var/log/svc" },
    });
    expect(c.get("listener.ssl.external.keyfile")).toBe(join(tmp.dir(), "key.pem"));
    expect(c.get("node.data_dir")).toBe(join(tmp.dir(), "var/data"));
    expect(c.get("log.dir")).toBe("/var/log/svc");
  });
});

describe("loadConfig errors", () => {
  it("names file, line and key for an unknown key, suggesting the nearest", () => {
    const file = tmp.write("svc.conf", "# comment\n\nmqtt.max_qos_alowed = 1\n");
    const e = configError(() => loadConfig({ file }));
    expect(e).toBeInstanceOf(Error);
    expect(e.name).toBe("ConfigError");
    expect(e.message).toBe(`${file}:3: unknown key "mqtt.max_qos_alowed" (did you mean mqtt.max_qos_allowed?)`);
  });

  it("suggests keys of zones and listeners by their own names", () => {
    const e = configError(() =>
      loadConfig({
        overrides: {
          "zone.internal.idle_timout": "1s",
          "listener.ws.external.mqtt_pth": "/x",
          "listner.tcp.external": "1",
          "completely.unrelated.thing": "1",
        },
      }),
    );
    expect(e.issues).toEqual([
      'command line: unknown key "zone.internal.idle_timout" (did you mean zone.internal.idle_timeout?)',
      'command line: unknown key "listener.ws.external.mqtt_pth" (did you mean listener.ws.external.mqtt_path?)',
      'command line: unknown key "listner.tcp.external" (did you mean listener.tcp.external?)',
      'command line: unknown key "completely.unrelated.thing"',
    ]);
  });

  it("names file, line and key for a bad value", () => {
    const file = tmp.write("svc.conf", "node.name = svc@127.0.0.1\nlistener.tcp.external = x\n");
    expect(() => loadConfig({ file })).toThrow(
      `${file}:2: listener.tcp.external: invalid bind "x" (expected <port>, <host>:<port> or [<ipv6>]:<port>)`,
    );
  });

  it("names the variable for a bad or unknown environment setting", () => {
    expect(() => loadConfig({ env: { SVC_MQTT__MAX_QOS_ALLOWED: "3" } })).toThrow(
      'environment SVC_MQTT__MAX_QOS_ALLOWED: mqtt.max_qos_allowed: integer "3" out of range (0..2)',
    );
    expect(() => loadConfig({ env: { SVC_MQTT__MAX_QOS_ALOWED: "1" } })).toThrow(
      'environment SVC_MQTT__MAX_QOS_ALOWED: unknown key "mqtt.max_qos_alowed" (did you mean SVC_MQTT__MAX_QOS_ALLOWED?)',
    );
    expect(() => loadConfig({ env: { SVC_ETCD_URL: "http://x" } })).toThrow(
      /^environment SVC_ETCD_URL: unknown key "etcd_url"/,
    );
  });

  it("reports a missing certificate file", () => {
    const file = tmp.write("svc.conf", "listener.ssl.external.certfile = certs/nope.pem\n");
    expect(() => loadConfig({ file, cwd: tmp.dir() })).toThrow(
      `${file}:1: listener.ssl.external.certfile: file not found: ${join(tmp.dir(), "certs/nope.pem")}`,
    );
  });

  it("reports every problem at once, syntax errors included", () => {
    const file = tmp.write("svc.conf", "log.level = loud\nnonsense\nmqtt.max_packet_size = big\n");
    const e = configError(() => loadConfig({ file, env: { SVC_LOG__TO: "nowhere" } }));
    expect(e.issues).toEqual([
      `${file}:2: syntax error: expected "key = value", got "nonsense"`,
      `${file}:1: log.level: invalid value "loud" (expected one of: debug, info, notice, warning, error, critical)`,
      `${file}:3: mqtt.max_packet_size: invalid size "big" (expected e.g. 512, 64KB, 1MB, 1GB)`,
      'environment SVC_LOG__TO: log.to: invalid value "nowhere" (expected one of: console, file, both)',
    ]);
    expect(e.message.split("\n")[0]).toBe("4 configuration errors:");
  });

  it("reports an unreadable file with the cause", () => {
    const missing = join(tmp.dir(), "missing.conf");
    const e = configError(() => loadConfig({ file: missing }));
    expect(e.message).toMatch(new RegExp(`^${missing}: cannot read the configuration file: ENOENT`));
    expect(e.cause).toBeInstanceOf(Error);
  });

  it("requires seeds for static discovery and node names of the form name@host", () => {
    expect(() => loadConfig({ overrides: { "cluster.discovery": "static" } })).toThrow(
      "command line: cluster.discovery: static discovery needs cluster.static.seeds",
    );
    expect(
      loadConfig({ overrides: { "cluster.discovery": "static", "cluster.static.seeds": "a@h1, b@h2" } }).get(
        "cluster.static.seeds",
      ),
    ).toEqual(["a@h1", "b@h2"]);
    expect(() => loadConfig({ overrides: { "node.name": "svc" } })).toThrow(/node\.name: invalid node name "svc"/);
  });
});

describe("Config.with", () => {
  it("derives a validated copy and leaves the original alone", () => {
    const base = loadConfig({ overrides: { "log.level": "info" } });
    const derived = base.with({ "mqtt.max_qos_allowed": 1, "zone.external.upgrade_qos": true });
    expect(derived.get("mqtt.max_qos_allowed")).toBe(1);
    expect(derived.get("log.level")).toBe("info");
    expect(derived.zone("external").upgradeQos).toBe(true);
    expect(base.get("mqtt.max_qos_allowed")).toBe(2);
    expect(() => base.with({ "mqtt.max_qos_allowed": 5 })).toThrow(ConfigError);
  });

  it("throws for a key it does not know", () => {
    const c = loadConfig({});
    expect(() => c.get("listener.tcp.a.b.acceptors")).toThrow(/unknown key "listener.tcp.a.b.acceptors"/);
  });
});
