// Restart tests: what a node keeps in its data dir across a stop and a start on the same dir.
//   - retained messages with `retainer.storage_type = disc` (stored, replaced, deleted by an
//     empty payload) are served after the restart exactly as they were; with `ram` they are gone;
//   - the loaded plugin set (`<data_dir>/loaded_plugins`) survives: an unloaded svc_retainer
//     stays unloaded; plugin operations fail with PluginError codes.
//
// Spec references:
//   MQTT 3.1.1 (OASIS) 3.3.1.3 RETAIN: the server stores the last retained message per topic
//     (MQTT-3.3.1-5), sends it to new subscriptions with RETAIN 1 (MQTT-3.3.1-6/8), a zero-byte
//     retained payload removes it (MQTT-3.3.1-10/11); 4.1 (state that must be kept).
//   MQTT 5.0 (OASIS) 3.3.1.3, 3.3.2.3 (properties kept with the retained message: Content Type,
//     User Property), 4.1.
//   The svc spec's plugin registry: `{name, true}.` lines in <data_dir>/loaded_plugins, and the
//   API error codes already_started / not_started / not_found.

import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import mqtt, { type IPublishPacket, type MqttClient } from "mqtt";
import { afterEach, describe, expect, it } from "vitest";
import { PluginError, parseLoadedPlugins } from "../../src/plugins/registry.ts";
import { startTestNode, type TestNode, type TestNodeOptions } from "../helpers/node.ts";

const started: TestNode[] = [];
const clients: MqttClient[] = [];
const dirs: string[] = [];

afterEach(async () => {
  await Promise.all(clients.splice(0).map((c) => c.endAsync(true)));
  for (const n of started.splice(0)) await n.close(true).catch(() => undefined);
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function newDataDir(): string {
  const d = mkdtempSync(join(tmpdir(), "svc-restart-"));
  dirs.push(d);
  return d;
}

async function start(opts: TestNodeOptions): Promise<TestNode> {
  const n = await startTestNode(opts);
  started.push(n);
  return n;
}

/** Stops `n` and keeps its data dir. */
async function stop(n: TestNode): Promise<void> {
  started.splice(started.indexOf(n), 1);
  await n.close(true);
}

async function client(n: TestNode, clientId: string, protocolVersion: 4 | 5 = 5): Promise<MqttClient> {
  const c = await mqtt.connectAsync(n.url, { clientId, protocolVersion, reconnectPeriod: 0 });
  clients.push(c);
  return c;
}

/**
 * Subscribes a fresh client to `filter` and returns every message it gets before a marker it
 * publishes itself afterwards (retained messages are sent when the subscription is made, so they
 * all come before the marker).
 */
async function retainedFor(n: TestNode, filter: string, markerTopic: string): Promise<IPublishPacket[]> {
  const c = await client(n, `reader-${Math.random().toString(16).slice(2)}`);
  const got: IPublishPacket[] = [];
  const done = new Promise<void>((resolve) => {
    c.on("message", (t, _p, packet) => {
      if (t === markerTopic) resolve();
      else got.push(packet);
    });
  });
  await c.subscribeAsync([filter, markerTopic], { qos: 1 });
  await c.publishAsync(markerTopic, "marker", { qos: 1 });
  await done;
  return got;
}

const summary = (ps: IPublishPacket[]): string[] =>
  ps.map((p) => `${p.topic}=${p.payload.toString()}${p.retain ? " (retained)" : ""}`).sort();

const DISC = { "retainer.storage_type": "disc" };
/** Retained topics of clients (the node's own retained $SYS description is left out). */
const userTopics = (n: TestNode): string[] =>
  n.retainer
    .topics()
    .filter((t) => !t.startsWith("$SYS/"))
    .sort();

describe("restart: retained messages with retainer.storage_type = disc", () => {
  it("stored, replaced and deleted retained messages come back exactly after a restart", async () => {
    const dataDir = newDataDir();
    const n1 = await start({ dataDir, set: DISC });
    const pub = await client(n1, "retain-writer");
    await pub.publishAsync("r/a", "A1", { qos: 1, retain: true });
    await pub.publishAsync("r/b", "B", { qos: 1, retain: true });
    await pub.publishAsync("r/c", "C", { qos: 1, retain: true });
    await pub.publishAsync("r/d/e", "DE", {
      qos: 1,
      retain: true,
      properties: { contentType: "text/plain", userProperties: { k: "v" } },
    });
    await pub.publishAsync("r/a", "A2", { qos: 1, retain: true }); // replaces A1
    await pub.publishAsync("r/c", "", { qos: 1, retain: true }); // deletes r/c [MQTT-3.3.1-10]
    await pub.publishAsync("r/n", "not retained", { qos: 1 });
    expect(userTopics(n1)).toEqual(["r/a", "r/b", "r/d/e"]);
    await pub.endAsync();
    await stop(n1);
    expect(existsSync(join(dataDir, "retainer"))).toBe(true);

    const n2 = await start({ dataDir, set: DISC });
    expect(userTopics(n2)).toEqual(["r/a", "r/b", "r/d/e"]);
    const got = await retainedFor(n2, "r/#", "marker/1");
    expect(summary(got)).toEqual(["r/a=A2 (retained)", "r/b=B (retained)", "r/d/e=DE (retained)"]);
    const de = got.find((p) => p.topic === "r/d/e") as IPublishPacket;
    expect(de.properties?.contentType).toBe("text/plain");
    expect(de.properties?.userProperties).toEqual({ k: "v" });
  });

  it("changes made after a restart survive the next restart too", async () => {
    const dataDir = newDataDir();
    const n1 = await start({ dataDir, set: DISC });
    const p1 = await client(n1, "w1");
    await p1.publishAsync("s/1", "one", { qos: 1, retain: true });
    await p1.publishAsync("s/2", "two", { qos: 1, retain: true });
    await p1.endAsync();
    await stop(n1);

    const n2 = await start({ dataDir, set: DISC });
    const p2 = await client(n2, "w2");
    await p2.publishAsync("s/1", "", { qos: 1, retain: true });
    await p2.publishAsync("s/3", "three", { qos: 1, retain: true });
    await p2.publishAsync("s/2", "TWO", { qos: 1, retain: true });
    await p2.endAsync();
    await stop(n2);

    const n3 = await start({ dataDir, set: DISC });
    const got = await retainedFor(n3, "s/+", "marker/2");
    expect(summary(got)).toEqual(["s/2=TWO (retained)", "s/3=three (retained)"]);
  });

  it("with retainer.storage_type = ram a restart forgets every retained message", async () => {
    const dataDir = newDataDir();
    const n1 = await start({ dataDir, set: { "retainer.storage_type": "ram" } });
    const pub = await client(n1, "ram-writer");
    await pub.publishAsync("m/a", "gone", { qos: 1, retain: true });
    expect(userTopics(n1)).toEqual(["m/a"]);
    await pub.endAsync();
    await stop(n1);

    const n2 = await start({ dataDir, set: { "retainer.storage_type": "ram" } });
    expect(userTopics(n2)).toEqual([]);
    expect(await retainedFor(n2, "m/#", "marker/3")).toEqual([]);
  });
});

describe("restart: the loaded plugin set survives", () => {
  const file = (dataDir: string): string => join(dataDir, "loaded_plugins");

  it("an unloaded svc_retainer stays unloaded after a restart, and loaded_plugins says so", async () => {
    const dataDir = newDataDir();
    const n1 = await start({ dataDir, set: DISC });
    expect(n1.plugins.isActive("svc_retainer")).toBe(true);
    expect(parseLoadedPlugins(readFileSync(file(dataDir), "utf8"))).toContain("svc_retainer");

    const pub = await client(n1, "before-unload");
    await pub.publishAsync("p/kept", "stored before unload", { qos: 1, retain: true });
    await n1.plugins.unload("svc_retainer");
    expect(n1.plugins.isActive("svc_retainer")).toBe(false);
    expect(readFileSync(file(dataDir), "utf8")).not.toContain("svc_retainer");
    // Unloaded: retained publishes are no longer stored or served.
    await pub.publishAsync("p/new", "while unloaded", { qos: 1, retain: true });
    expect(n1.retainer.count).toBe(0);
    await pub.endAsync();
    await stop(n1);

    const n2 = await start({ dataDir, set: DISC });
    expect(n2.plugins.isActive("svc_retainer")).toBe(false);
    expect(parseLoadedPlugins(readFileSync(file(dataDir), "utf8"))).not.toContain("svc_retainer");
    expect(n2.plugins.list().find((p) => p.name === "svc_retainer")?.active).toBe(false);
    expect(await retainedFor(n2, "p/#", "marker/4")).toEqual([]);

    // Loading it again brings back what the disc store held before the unload, and is persisted.
    await n2.plugins.load("svc_retainer");
    expect(n2.plugins.isActive("svc_retainer")).toBe(true);
    expect(readFileSync(file(dataDir), "utf8")).toContain("{svc_retainer, true}.");
    expect(summary(await retainedFor(n2, "p/#", "marker/5"))).toEqual(["p/kept=stored before unload (retained)"]);
    await stop(n2);

    const n3 = await start({ dataDir, set: DISC });
    expect(n3.plugins.isActive("svc_retainer")).toBe(true);
  });

  it("loading a started plugin rejects with PluginError already_started; other codes", async () => {
    const n = await start({ dataDir: newDataDir() });
    const already = n.plugins.load("svc_retainer");
    await expect(already).rejects.toBeInstanceOf(PluginError);
    await expect(already).rejects.toMatchObject({ name: "PluginError", code: "already_started" });
    expect(n.plugins.isActive("svc_retainer")).toBe(true);

    await expect(n.plugins.load("svc_no_such_plugin")).rejects.toMatchObject({ code: "not_found" });
    await n.plugins.unload("svc_retainer");
    await expect(n.plugins.unload("svc_retainer")).rejects.toMatchObject({ code: "not_started" });
    await expect(n.plugins.reload("svc_retainer")).rejects.toMatchObject({ code: "not_started" });
  });
});
