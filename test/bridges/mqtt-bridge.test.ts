// biome-ignore-all lint/suspicious/noTemplateCurlyInString: ${node} is a placeholder of the bridge configuration
// MQTT bridges end to end: a real svc node bridged to a real Mosquitto (Debian's `mosquitto`), and
// to a second svc node. A TCP relay in the test stands between the bridge and the remote broker
// so that the link can be cut and restored (the remote's own clients stay connected).
//
// Spec: Bridges (forwards, mountpoint, subscription.<n>, the local cache while disconnected,
// queue.replayq_dir).

import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server, type Socket, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base";
import mqtt, { type MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { HAVE_MOSQUITTO, type Mosquitto, startMosquitto } from "../helpers/mosquitto.ts";
import { startTestNode, type TestNode, type TestNodeOptions } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";

if (!HAVE_MOSQUITTO)
  console.log("[bridges] mosquitto not found: skipping the Mosquitto bridge tests (apt-get install mosquitto)");

/** A TCP relay to `port` that can cut every connection and refuse new ones, then accept again. */
class Relay {
  private server: Server | undefined;
  private readonly sockets = new Set<Socket>();
  port = 0;

  constructor(private readonly target: number) {}

  async open(): Promise<void> {
    const server = createServer((client) => {
      const upstream = tcpConnect(this.target, "127.0.0.1");
      for (const s of [client, upstream]) {
        this.sockets.add(s);
        s.on("error", () => {});
        s.on("close", () => {
          this.sockets.delete(s);
          client.destroy();
          upstream.destroy();
        });
      }
      client.pipe(upstream).pipe(client);
    });
    this.server = server;
    await new Promise<void>((r) => server.listen(this.port, "127.0.0.1", r));
    this.port = (server.address() as { port: number }).port;
  }

  async cut(): Promise<void> {
    const server = this.server;
    this.server = undefined;
    for (const s of this.sockets) s.destroy();
    if (server !== undefined) await new Promise<void>((r) => server.close(() => r()));
  }
}

const cleanups: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

function tempDir(prefix: string): string {
  const d = mkdtempSync(join(tmpdir(), prefix));
  cleanups.push(() => rmSync(d, { recursive: true, force: true }));
  return d;
}

async function client(url: string, opts: mqtt.IClientOptions = {}): Promise<MqttClient> {
  const c = await mqtt.connectAsync(url, { reconnectPeriod: 0, ...opts });
  cleanups.push(() => c.endAsync(true).catch(() => {}));
  return c;
}

/** A node with the bridge plugin loaded from `conf` (the text of svc_bridge_mqtt.conf). */
async function bridgedNode(conf: string, opts: TestNodeOptions & { etcDir?: string } = {}): Promise<TestNode> {
  const etcDir = opts.etcDir ?? tempDir("svc-bridge-etc-");
  writeFileSync(join(etcDir, "svc_bridge_mqtt.conf"), conf);
  const node = await startTestNode({ ...opts, set: { "plugins.etc_dir": etcDir, ...opts.set } });
  cleanups.push(() => node.close());
  // A node on a data dir that had it loaded loads it at start (`loaded_plugins`).
  if (!node.plugins.isActive("svc_bridge_mqtt")) await node.plugins.load("svc_bridge_mqtt");
  return node;
}

function collect(c: MqttClient): { topic: string; payload: string; props?: Record<string, unknown> }[] {
  const got: { topic: string; payload: string; props?: Record<string, unknown> }[] = [];
  c.on("message", (topic, payload, packet) =>
    got.push({ topic, payload: payload.toString(), props: packet.properties as Record<string, unknown> | undefined }),
  );
  return got;
}

const status = (node: TestNode, name: string) => node.services.bridges.get(name)?.status;

describe.skipIf(!HAVE_MOSQUITTO)("MQTT bridge to Mosquitto", () => {
  let mosq: Mosquitto;

  async function remote(extra: string[] = []): Promise<Mosquitto> {
    mosq = await startMosquitto(extra);
    cleanups.push(() => mosq.close());
    return mosq;
  }

  it("forwards local topics under the mountpoint, publishes remote subscriptions here, never echoes back", async () => {
    const m = await remote();
    const node = await bridgedNode(
      [
        `bridge.mqtt.aws.address = 127.0.0.1:${m.port}`,
        "bridge.mqtt.aws.forwards = fwd/#,loop/#",
        "bridge.mqtt.aws.mountpoint = bridge/${node}/",
        "bridge.mqtt.aws.subscription.1.topic = cmd/#",
        "bridge.mqtt.aws.subscription.1.qos = 1",
        "bridge.mqtt.aws.subscription.2.topic = bridge/+/loop/#",
        "bridge.mqtt.aws.start_type = auto",
        "",
      ].join("\n"),
    );
    await waitUntil(() => status(node, "aws") === "Running", "bridge running", 10_000);
    const far = await client(m.url, { clientId: "far" });
    await far.subscribeAsync("bridge/#", { qos: 1 });
    const farGot = collect(far);
    const near = await client(node.url, { clientId: "near" });
    await near.subscribeAsync("cmd/#", { qos: 1 });
    await near.subscribeAsync("bridge/#", { qos: 1 });
    const nearGot = collect(near);

    await near.publishAsync("fwd/a", "one", { qos: 1 });
    await near.publishAsync("other/a", "not forwarded", { qos: 1 });
    await near.publishAsync("fwd/b", "two", { qos: 0 });
    const prefix = `bridge/${node.broker.nodeName}/`;
    await waitUntil(() => farGot.length >= 2, "forwarded messages at mosquitto");
    expect(farGot.map((g) => [g.topic, g.payload])).toEqual([
      [`${prefix}fwd/a`, "one"],
      [`${prefix}fwd/b`, "two"],
    ]);

    await far.publishAsync("cmd/reboot", "now", { qos: 1 });
    await waitUntil(() => nearGot.some((g) => g.topic === "cmd/reboot"), "remote subscription delivered here");
    expect(nearGot.find((g) => g.topic === "cmd/reboot")?.payload).toBe("now");

    // loop/1 goes out as bridge/<node>/loop/1 and comes back through subscription 2: it is
    // published here but not forwarded again (the bridge never sends back what it received).
    await near.publishAsync("loop/1", "x", { qos: 1 });
    await waitUntil(() => nearGot.some((g) => g.topic === `${prefix}loop/1`), "echo received here");
    await near.publishAsync("fwd/last", "marker", { qos: 1 });
    await waitUntil(() => farGot.some((g) => g.topic === `${prefix}fwd/last`), "marker at mosquitto");
    expect(farGot.filter((g) => g.topic.endsWith("loop/1"))).toHaveLength(1);
    expect(farGot.some((g) => g.topic.includes("bridge/bridge"))).toBe(false);

    const info = node.services.bridges.get("aws");
    expect(info).toMatchObject({ kind: "mqtt", status: "Running", queued: 0, inflight: 0, dropped: 0 });
    expect(info?.forwarded).toBe(4);
    expect(info?.received).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it("caches on disk while the link is down and sends every message in order when it is back, across a restart", async () => {
    const m = await remote();
    const relay = new Relay(m.port);
    await relay.open();
    cleanups.push(() => relay.cut());
    const dataDir = tempDir("svc-bridge-data-");
    const etcDir = tempDir("svc-bridge-etc-");
    const replayq = join(dataDir, "replayq-aws");
    const conf = [
      `bridge.mqtt.aws.address = 127.0.0.1:${relay.port}`,
      "bridge.mqtt.aws.forwards = q/#",
      "bridge.mqtt.aws.reconnect_interval = 200ms",
      "bridge.mqtt.aws.start_type = auto",
      `bridge.mqtt.aws.queue.replayq_dir = ${replayq}`,
      "bridge.mqtt.aws.queue.replayq_seg_bytes = 1KB",
      "bridge.mqtt.aws.queue.batch_count_limit = 7",
      "",
    ].join("\n");
    let node = await bridgedNode(conf, { dataDir, etcDir });
    await waitUntil(() => status(node, "aws") === "Running", "bridge running", 10_000);
    const far = await client(m.url, { clientId: "far" });
    await far.subscribeAsync("q/#", { qos: 1 });
    const farGot = collect(far);

    await relay.cut();
    await waitUntil(() => status(node, "aws") === "Connecting", "bridge disconnected");
    let near = await client(node.url, { clientId: "near" });
    for (let i = 0; i < 30; i++) await near.publishAsync(`q/${i}`, `m${i}`, { qos: 1 });
    await waitUntil(() => node.services.bridges.get("aws")?.queued === 30, "30 messages cached");
    expect(readdirSync(replayq).filter((f) => f.endsWith(".seg")).length).toBeGreaterThan(1); // 1 KB segments
    expect(farGot).toEqual([]);

    // The node stops with the messages still cached; a new node on the same data reads them back.
    await near.endAsync();
    await node.close(true);
    for (let i = 30; i < 40; i++) {
      if (i === 30) {
        node = await bridgedNode(conf, { dataDir, etcDir });
        near = await client(node.url, { clientId: "near" });
        expect(node.services.bridges.get("aws")?.queued).toBe(30);
      }
      await near.publishAsync(`q/${i}`, `m${i}`, { qos: 1 });
    }
    await relay.open();
    await waitUntil(() => farGot.length >= 40, "every cached message at mosquitto", 15_000);
    expect(farGot.map((g) => g.payload)).toEqual(Array.from({ length: 40 }, (_, i) => `m${i}`));
    await waitUntil(() => node.services.bridges.get("aws")?.forwarded === 40, "every message acknowledged");
    expect(node.services.bridges.get("aws")).toMatchObject({ status: "Running", queued: 0, inflight: 0 });
    // Acknowledged segments are deleted: one (the one written to) is left.
    expect(readdirSync(replayq).filter((f) => f.endsWith(".seg"))).toHaveLength(1);
  }, 40_000);

  it("a stopped bridge forwards and caches nothing; start and stop at run time", async () => {
    const m = await remote();
    const node = await bridgedNode(
      [`bridge.mqtt.b1.address = 127.0.0.1:${m.port}`, "bridge.mqtt.b1.forwards = s/#", ""].join("\n"),
    );
    const bridges = node.services.bridges;
    expect(status(node, "b1")).toBe("Stopped"); // start_type manual
    const far = await client(m.url, { clientId: "far" });
    await far.subscribeAsync("#", { qos: 1 });
    const farGot = collect(far);
    const near = await client(node.url, { clientId: "near" });
    await near.publishAsync("s/dropped", "x", { qos: 1 });
    expect(bridges.get("b1")?.queued).toBe(0);
    expect(bridges.start("b1")).toEqual({ ok: true, changed: true });
    expect(bridges.start("b1")).toEqual({ ok: true, changed: false });
    await waitUntil(() => status(node, "b1") === "Running", "bridge running");
    expect(bridges.addForward("b1", "t/+")).toEqual({ ok: true, changed: true });
    await near.publishAsync("t/1", "added", { qos: 1 });
    await waitUntil(() => farGot.length === 1, "added forward at mosquitto");
    expect(farGot[0]).toMatchObject({ topic: "t/1", payload: "added" });
    expect(await bridges.stop("b1")).toEqual({ ok: true, changed: true });
    expect(status(node, "b1")).toBe("Stopped");
    expect(await bridges.stop("b1")).toEqual({ ok: true, changed: false });
  }, 30_000);

  it("MQTT 5.0: no more QoS 2 publishes unacknowledged than the remote's Receive Maximum", async () => {
    // Mosquitto advertises max_inflight_messages as its Receive Maximum and refuses the excess
    // with 0x97 (quota exceeded), which the bridge would send again only after retry_interval.
    const m = await remote(["max_inflight_messages 2"]);
    const node = await bridgedNode(
      [
        `bridge.mqtt.rm.address = 127.0.0.1:${m.port}`,
        "bridge.mqtt.rm.proto_ver = mqttv5",
        "bridge.mqtt.rm.forwards = r/#",
        "bridge.mqtt.rm.retry_interval = 60s",
        "bridge.mqtt.rm.start_type = auto",
        "",
      ].join("\n"),
    );
    await waitUntil(() => status(node, "rm") === "Running", "bridge running");
    const far = await client(m.url, { clientId: "far" });
    await far.subscribeAsync("r/#", { qos: 2 });
    const farGot = collect(far);
    const near = await client(node.url, { clientId: "near" });
    await Promise.all(Array.from({ length: 60 }, (_, i) => near.publishAsync(`r/${i}`, `m${i}`, { qos: 2 })));
    await waitUntil(() => farGot.length >= 60, "every message at mosquitto", 15_000);
    expect(farGot.map((g) => g.payload)).toEqual(Array.from({ length: 60 }, (_, i) => `m${i}`));
    await waitUntil(() => node.services.bridges.get("rm")?.forwarded === 60, "every message acknowledged");
    expect(node.services.bridges.get("rm")).toMatchObject({ status: "Running", queued: 0, inflight: 0, dropped: 0 });
  }, 30_000);
});

describe("MQTT bridge between two svc nodes", () => {
  it("MQTT 5.0: properties kept, and the trace continues at the remote node", async () => {
    const exporter = new InMemorySpanExporter();
    const tracing = { spanProcessors: [new SimpleSpanProcessor(exporter)] };
    const far = await startTestNode({ set: { "telemetry.tracing": "on" }, tracing });
    cleanups.push(() => far.close());
    const node = await bridgedNode(
      [
        `bridge.mqtt.v5.address = 127.0.0.1:${far.port("tcp")}`,
        "bridge.mqtt.v5.proto_ver = mqttv5",
        "bridge.mqtt.v5.forwards = t5/#",
        "bridge.mqtt.v5.mountpoint = up/",
        "bridge.mqtt.v5.start_type = auto",
        "",
      ].join("\n"),
      { set: { "telemetry.tracing": "on" }, tracing },
    );
    await waitUntil(() => status(node, "v5") === "Running", "bridge running", 10_000);
    const sub = await client(far.url, { clientId: "far-sub", protocolVersion: 5 });
    await sub.subscribeAsync("up/#", { qos: 1 });
    const got = collect(sub);
    const pub = await client(node.url, { clientId: "near-pub", protocolVersion: 5 });
    const TRACE = "4bf92f3577b34da6a3ce929d0e0e4736";
    await pub.publishAsync("t5/x", "hello", {
      qos: 1,
      properties: {
        contentType: "text/plain",
        responseTopic: "reply/here",
        correlationData: Buffer.from("c1"),
        userProperties: { k: "v", traceparent: `00-${TRACE}-00f067aa0ba902b7-01` },
      },
    });
    await waitUntil(() => got.length === 1, "forwarded message at the far node");
    const props = got[0].props as Record<string, unknown>;
    expect(got[0]).toMatchObject({ topic: "up/t5/x", payload: "hello" });
    expect(props.contentType).toBe("text/plain");
    expect(props.responseTopic).toBe("reply/here");
    expect(Buffer.from(props.correlationData as Buffer).toString()).toBe("c1");
    expect((props.userProperties as Record<string, unknown>).k).toBe("v");

    const spans = () => exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === TRACE);
    await waitUntil(() => spans().some((s) => s.name === "deliver up/t5/x"), "the far node's deliver span");
    const one = (name: string) => {
      const s = spans().filter((x) => x.name === name);
      expect(s, name).toHaveLength(1);
      return s[0];
    };
    const publish = one("publish t5/x");
    const send = one("bridge up/t5/x");
    const farPublish = one("publish up/t5/x");
    expect(send.parentSpanContext?.spanId).toBe(publish.spanContext().spanId);
    expect(send.attributes).toMatchObject({ "svc.bridge.name": "v5", "messaging.destination.name": "up/t5/x" });
    expect(farPublish.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(one("deliver up/t5/x").parentSpanContext?.spanId).toBe(farPublish.spanContext().spanId);
  }, 30_000);

  it("a bad configuration stops the plugin's load with every problem at file:line", async () => {
    const etcDir = tempDir("svc-bridge-etc-");
    const node = await startTestNode({ set: { "plugins.etc_dir": etcDir } });
    cleanups.push(() => node.close());
    const file = join(etcDir, "svc_bridge_mqtt.conf");
    writeFileSync(
      file,
      [
        "bridge.mqtt.a.address = nowhere",
        "bridge.mqtt.a.mountpoint = m/",
        "bridge.mqtt.b.address = 127.0.0.1:1883",
        "bridge.mqtt.b.forwards = ok/#,bad/#/x",
        "bridge.mqtt.b.subscription.1.qos = 1",
        "bridge.mqtt.b.colour = blue",
        "bridge.mqtt.c.address = 127.0.0.1:8883",
        "bridge.mqtt.c.ssl = on",
        "bridge.mqtt.c.ciphers = NO-SUCH-CIPHER",
        "",
      ].join("\n"),
    );
    const err = await node.plugins.load("svc_bridge_mqtt").then(
      () => null,
      (e: Error) => e,
    );
    expect(err?.message).toContain(`${file}:6: unknown key bridge.mqtt.b.colour`);
    writeFileSync(file, readConfWithout(file, "colour"));
    const err2 = await node.plugins.load("svc_bridge_mqtt").then(
      () => null,
      (e: Error) => e,
    );
    expect(err2?.message).toContain(`${file}:1: bridge.mqtt.a.address: expected host:port or a node name`);
    expect(err2?.message).toContain(`${file}:2: bridge.mqtt.a.mountpoint: requires forwards`);
    expect(err2?.message).toContain(`${file}:4: bridge.mqtt.b.forwards: invalid topic filter "bad/#/x"`);
    expect(err2?.message).toContain(`${file}:5: bridge.mqtt.b.subscription.1.topic: required`);
    expect(err2?.message).toMatch(/:7: bridge\.mqtt\.c\.ssl: TLS settings refused: .*cipher/);
    expect(node.plugins.isActive("svc_bridge_mqtt")).toBe(false);
  });
});

function readConfWithout(file: string, word: string): string {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => !l.includes(word))
    .join("\n");
}
