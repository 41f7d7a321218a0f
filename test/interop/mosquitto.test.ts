// Interoperability with Eclipse Mosquitto's command line clients (Debian package
// `mosquitto-clients`: mosquitto_pub / mosquitto_sub, libmosquitto): an independent MQTT 3.1,
// 3.1.1 and 5.0 client implementation talking to svc over TCP, mixed with MQTT.js.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 3.1 CONNECT, 3.3 PUBLISH (3.3.1.3 RETAIN, MQTT-3.3.1-5/6/10), 3.8 SUBSCRIBE,
//     4.3.2 QoS 1 and 4.3.3 QoS 2 delivery, 4.7 topic wildcards.
//   MQTT 5.0 (OASIS) 3.3.2.3.7 User Property, 4.3, 4.7.
//   MQTT 3.1 (IBM): "MQIsdp", level 3.
//
// The binaries come from `apt-get install -y --no-install-recommends mosquitto-clients` (CI
// installs them); without them the suite is skipped with a printed line saying so.

import { type ChildProcess, spawn, spawnSync } from "node:child_process";
import mqtt, { type MqttClient } from "mqtt";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { ClientInfo } from "../../src/broker/types.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";

function hasBinary(name: string): boolean {
  const r = spawnSync(name, ["--help"], { stdio: "ignore" });
  return r.error === undefined;
}

const HAVE_MOSQUITTO = hasBinary("mosquitto_sub") && hasBinary("mosquitto_pub");
if (!HAVE_MOSQUITTO) {
  console.log(
    "[interop] mosquitto_pub/mosquitto_sub not found: skipping the Mosquitto interop tests; " +
      "install mosquitto-clients (apt-get install -y --no-install-recommends mosquitto-clients)",
  );
}

interface Run {
  proc: ChildProcess;
  /** stdout so far. */
  out(): string;
  /** Resolves with the exit code and the full output once the process exits. */
  done: Promise<{ code: number | null; stdout: string; stderr: string }>;
}

const running = new Set<ChildProcess>();

function run(cmd: string, args: string[]): Run {
  const proc = spawn(cmd, args, { stdio: ["ignore", "pipe", "pipe"] });
  running.add(proc);
  let stdout = "";
  let stderr = "";
  proc.stdout?.setEncoding("utf8").on("data", (d: string) => {
    stdout += d;
  });
  proc.stderr?.setEncoding("utf8").on("data", (d: string) => {
    stderr += d;
  });
  const done = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    proc.once("error", reject);
    proc.once("close", (code) => {
      running.delete(proc);
      resolve({ code, stdout, stderr });
    });
  });
  return { proc, out: () => stdout, done };
}

let node: TestNode;
let port: string;
const clients: MqttClient[] = [];
let owners = 0;

/** Resolves when `clientId` has been granted a subscription to `filter` (the broker's hook). */
function subscribed(clientId: string, filter: string): Promise<void> {
  const owner = `interop-wait-${++owners}`;
  return new Promise((resolve) => {
    node.broker.hooks.add(
      "session.subscribed",
      (client: ClientInfo, f: string) => {
        if (client.clientId === clientId && f === filter) {
          node.broker.hooks.removeOwner(owner);
          resolve();
        }
      },
      0,
      owner,
    );
  });
}

async function js(protocolVersion: 4 | 5, clientId: string): Promise<MqttClient> {
  const c = await mqtt.connectAsync(node.url, { protocolVersion, clientId, reconnectPeriod: 0 });
  clients.push(c);
  return c;
}

function nextMessage(c: MqttClient, topic: string): Promise<{ payload: string; packet: mqtt.IPublishPacket }> {
  return new Promise((resolve) => {
    const on = (t: string, p: Buffer, packet: mqtt.IPublishPacket): void => {
      if (t !== topic) return;
      c.off("message", on);
      resolve({ payload: p.toString(), packet });
    };
    c.on("message", on);
  });
}

describe.skipIf(!HAVE_MOSQUITTO)("interop: mosquitto_pub / mosquitto_sub", () => {
  beforeAll(async () => {
    node = await startTestNode();
    port = String(node.port("tcp"));
  });
  afterAll(async () => {
    await node?.close();
  });
  afterEach(async () => {
    for (const p of running) p.kill("SIGKILL");
    running.clear();
    await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
  });

  it.each([
    ["mqttv311", 4],
    ["mqttv5", 5],
  ] as const)("mosquitto_sub -V %s -t t/# -C 3 -v receives 3 messages from MQTT.js", async (version, jsVer) => {
    const id = `msub-${version}`;
    const ready = subscribed(id, "t/#");
    const sub = run("mosquitto_sub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      version,
      "-i",
      id,
      "-t",
      "t/#",
      "-C",
      "3",
      "-v",
      "-q",
      "2",
      "-W",
      "15",
    ]);
    await ready;
    const pub = await js(jsVer, `jspub-${version}`);
    await pub.publishAsync("t/a", "one", { qos: 0 });
    await pub.publishAsync("t/b", "two", { qos: 1 });
    await pub.publishAsync("t/c/d", "three", { qos: 2 });
    const r = await sub.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim().split("\n")).toEqual(["t/a one", "t/b two", "t/c/d three"]);
  });

  it("mosquitto_pub -q 1 (3.1.1) -> MQTT.js subscriber, QoS 1", async () => {
    const sub = await js(4, "js-q1");
    await sub.subscribeAsync("q/1", { qos: 1 });
    const got = nextMessage(sub, "q/1");
    const r = await run("mosquitto_pub", ["-h", "127.0.0.1", "-p", port, "-t", "q/1", "-m", "at least once", "-q", "1"])
      .done;
    expect(r.code, r.stderr).toBe(0);
    const m = await got;
    expect(m.payload).toBe("at least once");
    expect(m.packet.qos).toBe(1);
  });

  it("mosquitto_pub -q 2 -V mqttv5 -> MQTT.js 5.0 subscriber gets it exactly once", async () => {
    const sub = await js(5, "js-q2");
    await sub.subscribeAsync("q/2", { qos: 2 });
    const seen: string[] = [];
    sub.on("message", (t, p) => {
      if (t === "q/2") seen.push(p.toString());
    });
    const first = nextMessage(sub, "q/2");
    const r = await run("mosquitto_pub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      "mqttv5",
      "-t",
      "q/2",
      "-m",
      "exactly once",
      "-q",
      "2",
    ]).done;
    expect(r.code, r.stderr).toBe(0); // the PUBREC/PUBREL/PUBCOMP flow completed
    expect((await first).packet.qos).toBe(2);
    // A marker behind it: once the marker arrives, nothing else may have come in between.
    const marker = nextMessage(sub, "q/2");
    const pub = await js(5, "js-q2-marker");
    await pub.publishAsync("q/2", "marker", { qos: 2 });
    await marker;
    expect(seen).toEqual(["exactly once", "marker"]);
  });

  it("mosquitto_pub -V mqttv31 (MQIsdp) -> MQTT.js subscriber", async () => {
    const sub = await js(4, "js-v31");
    await sub.subscribeAsync("v31/t", { qos: 1 });
    const got = nextMessage(sub, "v31/t");
    const r = await run("mosquitto_pub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      "mqttv31",
      "-i",
      "mosq-v31",
      "-t",
      "v31/t",
      "-m",
      "from 3.1",
      "-q",
      "1",
    ]).done;
    expect(r.code, r.stderr).toBe(0);
    expect((await got).payload).toBe("from 3.1");
  });

  it("mosquitto_pub -r stores a retained message; mosquitto_sub gets it flagged retained; -r -n clears it", async () => {
    const set = await run("mosquitto_pub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-t",
      "ret/x",
      "-m",
      "kept",
      "-r",
      "-q",
      "1",
    ]).done;
    expect(set.code, set.stderr).toBe(0);
    expect(node.retainer.lookup("ret/x")?.payload.toString()).toBe("kept");
    const r = await run("mosquitto_sub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-t",
      "ret/#",
      "-C",
      "1",
      "-F",
      "%r %t %p",
      "-W",
      "10",
    ]).done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("1 ret/x kept");
    const clear = await run("mosquitto_pub", ["-h", "127.0.0.1", "-p", port, "-t", "ret/x", "-n", "-r", "-q", "1"])
      .done;
    expect(clear.code, clear.stderr).toBe(0);
    expect(node.retainer.lookup("ret/x")).toBeUndefined();
  });

  it("mosquitto_pub -V mqttv5 -D publish user-property reaches MQTT.js 5.0 with the property", async () => {
    const sub = await js(5, "js-props");
    await sub.subscribeAsync("props/t", { qos: 1 });
    const got = nextMessage(sub, "props/t");
    const r = await run("mosquitto_pub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      "mqttv5",
      "-t",
      "props/t",
      "-m",
      "p",
      "-q",
      "1",
      "-D",
      "publish",
      "user-property",
      "origin",
      "mosquitto",
      "-D",
      "publish",
      "content-type",
      "text/plain",
    ]).done;
    expect(r.code, r.stderr).toBe(0);
    const m = await got;
    expect(m.packet.properties?.userProperties).toEqual({ origin: "mosquitto" });
    expect(m.packet.properties?.contentType).toBe("text/plain");
  });

  it("mixed: mosquitto publishes, MQTT.js answers, mosquitto_sub receives the answer", async () => {
    const subId = "msub-mixed";
    const ready = subscribed(subId, "mix/answer");
    const msub = run("mosquitto_sub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      "mqttv5",
      "-i",
      subId,
      "-t",
      "mix/answer",
      "-C",
      "1",
      "-q",
      "1",
      "-W",
      "15",
    ]);
    await ready;
    const echo = await js(4, "js-echo");
    await echo.subscribeAsync("mix/question", { qos: 1 });
    echo.on("message", (t, p) => {
      if (t === "mix/question") void echo.publishAsync("mix/answer", `re: ${p.toString()}`, { qos: 1 });
    });
    const pub = await run("mosquitto_pub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-V",
      "mqttv311",
      "-t",
      "mix/question",
      "-m",
      "ping",
      "-q",
      "2",
    ]).done;
    expect(pub.code, pub.stderr).toBe(0);
    const r = await msub.done;
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("re: ping");
  });

  it("mixed: MQTT.js 5.0 publishes with QoS 2, mosquitto_sub -q 2 (3.1.1) prints it with its QoS", async () => {
    const subId = "msub-q2";
    const ready = subscribed(subId, "mixq2/#");
    const msub = run("mosquitto_sub", [
      "-h",
      "127.0.0.1",
      "-p",
      port,
      "-i",
      subId,
      "-t",
      "mixq2/#",
      "-C",
      "2",
      "-q",
      "2",
      "-F",
      "%q %t %p",
      "-W",
      "15",
    ]);
    await ready;
    const pub = await js(5, "js-q2-pub");
    await pub.publishAsync("mixq2/a", "two", { qos: 2 });
    await pub.publishAsync("mixq2/b", "one", { qos: 1 });
    const r = await msub.done;
    expect(r.code, r.stderr).toBe(0);
    // mosquitto_sub prints a QoS 2 message once its PUBREL arrives, which may be after the QoS 1
    // message sent next was printed: the order of the lines is not the order of delivery.
    expect(r.stdout.trim().split("\n").sort()).toEqual(["1 mixq2/b one", "2 mixq2/a two"]);
  });
});
