// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${...} are placeholders of rule templates
// A bridge over TLS (the remote's certificate checked against the configured CA, and a client
// certificate presented), and the bridge as a rule-engine resource: a `bridge_mqtt` resource and
// a rule whose `data_to_mqtt_broker` action forwards what it selects. The remote broker is a
// second svc node with a TLS listener that requires client certificates.

import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";
import { makePki } from "../listeners/helpers.ts";

describe("bridges over TLS and as a rule resource", () => {
  let dir: string;
  let far: TestNode;
  let node: TestNode;
  let farSub: MqttClient;
  const got: [string, string][] = [];
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "svc-bridge-tls-"));
    const pki = await makePki();
    const file = (name: string, text: string) => {
      writeFileSync(join(dir, name), text);
      return join(dir, name);
    };
    const ca = file("ca.pem", pki.ca.cert);
    far = await startTestNode({
      set: {
        "listener.ssl.external": "127.0.0.1:0",
        "listener.ssl.external.keyfile": file("server-key.pem", pki.server.key),
        "listener.ssl.external.certfile": file("server-cert.pem", pki.server.cert),
        "listener.ssl.external.cacertfile": ca,
        "listener.ssl.external.verify": "verify_peer",
        "listener.ssl.external.fail_if_no_peer_cert": "true",
      },
    });
    const etc = join(dir, "etc");
    mkdirSync(etc);
    writeFileSync(
      join(etc, "svc_bridge_mqtt.conf"),
      [
        `bridge.mqtt.secure.address = localhost:${far.port("ssl")}`,
        "bridge.mqtt.secure.ssl = on",
        `bridge.mqtt.secure.cacertfile = ${ca}`,
        `bridge.mqtt.secure.certfile = ${file("client-cert.pem", pki.client.cert)}`,
        `bridge.mqtt.secure.keyfile = ${file("client-key.pem", pki.client.key)}`,
        // The family's comma-separated form, TLS 1.3 suites included (OpenSSL itself wants colons there).
        "bridge.mqtt.secure.ciphers = TLS_AES_256_GCM_SHA384,TLS_AES_128_GCM_SHA256,ECDHE-ECDSA-AES256-GCM-SHA384,ECDHE-RSA-AES256-GCM-SHA384",
        "bridge.mqtt.secure.forwards = tls/#",
        "bridge.mqtt.secure.start_type = auto",
        // The same remote without a client certificate: the handshake fails, it keeps retrying.
        `bridge.mqtt.nocert.address = localhost:${far.port("ssl")}`,
        "bridge.mqtt.nocert.ssl = on",
        `bridge.mqtt.nocert.cacertfile = ${ca}`,
        "bridge.mqtt.nocert.forwards = tls/#",
        "bridge.mqtt.nocert.reconnect_interval = 200ms",
        "bridge.mqtt.nocert.start_type = auto",
        "",
      ].join("\n"),
    );
    node = await startTestNode({ set: { "plugins.etc_dir": etc } });
    await node.plugins.load("svc_bridge_mqtt");
    farSub = await mqtt.connectAsync(far.url, { clientId: "far-sub", reconnectPeriod: 0 });
    clients.push(farSub);
    await farSub.subscribeAsync("#", { qos: 1 });
    farSub.on("message", (t, p) => got.push([t, p.toString()]));
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync(true).catch(() => {})));
    await node?.close();
    await far?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const publish = async (topic: string, payload: string) => {
    const c = await mqtt.connectAsync(node.url, { clientId: `pub-${topic.replaceAll("/", "-")}`, reconnectPeriod: 0 });
    clients.push(c);
    await c.publishAsync(topic, payload, { qos: 1 });
  };

  it("forwards over TLS with a client certificate; without one the bridge stays disconnected", async () => {
    await waitUntil(() => node.services.bridges.get("secure")?.status === "Running", "TLS bridge running", 10_000);
    await publish("tls/a", "secret");
    await waitUntil(() => got.some(([t]) => t === "tls/a"), "forwarded over TLS");
    expect(node.services.bridges.get("nocert")?.status).toBe("Connecting");
    expect(node.services.bridges.get("nocert")?.queued).toBe(1);
    expect(got.filter(([t]) => t === "tls/a")).toEqual([["tls/a", "secret"]]);
  });

  it("a bridge_mqtt resource and a rule's data_to_mqtt_broker action", async () => {
    const rules = node.services.rules;
    const farConnections = () => far.broker.sessions.connectedCount;
    const baseline = farConnections();
    const res = await rules.createResource({
      type: "bridge_mqtt",
      config: {
        address: `127.0.0.1:${far.port("tcp")}`,
        clientid: "rb",
        mountpoint: "rule/${node}/",
        reconnect_interval: "200ms",
        disk_cache: "on",
      },
    });
    const id = (res as { id: string }).id;
    const cache = join(node.dataDir, "bridges", id.replace(/[^A-Za-z0-9_-]/g, "_"));
    expect(existsSync(join(cache, "LOCK"))).toBe(true);
    // The health check at creation waits for the connection.
    expect(rules.resourceStatus(id)).toEqual({ is_alive: true });
    await rules.createRule({
      rawsql: 'SELECT payload.n as n, clientid FROM "sensor/#"',
      actions: [
        {
          name: "data_to_mqtt_broker",
          params: { $resource: id, forward_topic: "out/${clientid}", payload_tmpl: "n=${n}" },
        },
      ],
    });
    await publish("sensor/1", JSON.stringify({ n: 42 }));
    const topic = `rule/${node.broker.nodeName}/out/pub-sensor-1`;
    await waitUntil(() => got.some(([t]) => t === topic), "the action's message at the remote");
    expect(got.find(([t]) => t === topic)?.[1]).toBe("n=42");
    await expect(rules.createResource({ type: "bridge_mqtt", config: { address: "nowhere" } })).rejects.toThrow(
      /address must be host:port/,
    );
    // Deleting the resource stops its bridge: its one connection at the far node ends (a create
    // and the store's echo of it start the resource once at a time, never two bridges at once).
    await rules.deleteRule((await rules.listRules())[0].id);
    await rules.deleteResource(id);
    await waitUntil(() => farConnections() === baseline, "the resource's connection closed");
    // Its cache on disk goes with it.
    await waitUntil(() => !existsSync(cache), "the deleted resource's cache directory removed");
  }, 30_000);
});
