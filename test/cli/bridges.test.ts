// `svc_ctl bridges ...` end to end: the real tool (a child process) against a real node whose
// bridge plugin (svc_bridge_mqtt, loaded with `svc_ctl plugins load`) has two MQTT bridges pointing
// at a closed local port, `aws` started with the plugin (auto: Connecting) and `edge` manual
// (Stopped). The family's `emqx_ctl bridges` lines, --json, and the failures (unknown bridge,
// invalid filter, bad QoS).

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useNode } from "../conformance/helpers.ts";
import { writeTwoBridges } from "../helpers/bridge-fixture.ts";
import { ctl, run } from "./ctl.ts";

const PLUGIN = "svc_bridge_mqtt";
const etcDir = mkdtempSync(join(tmpdir(), "svc-bridges-etc-"));
afterAll(() => rmSync(etcDir, { recursive: true, force: true }));

describe("svc_ctl bridges", () => {
  const node = useNode({ "plugins.etc_dir": etcDir });
  const bridges = (...args: string[]) => ctl(node(), "bridges", ...args);

  beforeAll(async () => {
    await writeTwoBridges(etcDir);
    const load = await ctl(node(), "plugins", "load", PLUGIN);
    expect(load.code, load.stderr).toBe(0);
  });

  it("help lists the bridges usage lines", async () => {
    const r = await run(["bridges", "help"]);
    expect(r.code).toBe(0);
    expect(r.lines.map((l) => l.slice(0, 70).trimEnd())).toEqual([
      "svc_ctl bridges list",
      "svc_ctl bridges start <Name>",
      "svc_ctl bridges stop <Name>",
      "svc_ctl bridges forwards <Name>",
      "svc_ctl bridges add-forward <Name> <Topic>",
      "svc_ctl bridges del-forward <Name> <Topic>",
      "svc_ctl bridges subscriptions <Name>",
      "svc_ctl bridges add-subscription <Name> <Topic> <Qos>",
      "svc_ctl bridges del-subscription <Name> <Topic>",
    ]);
    for (const l of r.lines) expect(l.indexOf("# "), l).toBe(70);
    const top = await run(["help"]);
    expect(top.lines).toContain(r.lines[0]);
  });

  it("list: the auto bridge Connecting, the manual one Stopped; --json gives the bridges", async () => {
    const r = await bridges("list");
    expect(r).toMatchObject({
      code: 0,
      lines: ["name: aws     status: Connecting", "name: edge     status: Stopped"],
    });
    const j = await bridges("list", "--json");
    expect(j.code).toBe(0);
    expect(JSON.parse(j.stdout)).toEqual([
      expect.objectContaining({ name: "aws", status: "Connecting", forwards: ["a/#", "b/c"] }),
      expect.objectContaining({ name: "edge", status: "Stopped", forwards: [] }),
    ]);
  });

  it("start and stop, and the already-started / already-stopped answers", async () => {
    expect(await bridges("start", "edge")).toMatchObject({ code: 0, lines: ["Start bridge successfully."] });
    expect((await bridges("list")).lines).toContain("name: edge     status: Connecting");
    expect(await bridges("start", "edge")).toMatchObject({ code: 0, lines: ["Bridge already started."] });
    const j = await bridges("start", "aws", "--json");
    expect(JSON.parse(j.stdout)).toEqual({ result: "ok", changed: false });
    expect(await bridges("stop", "edge")).toMatchObject({ code: 0, lines: ["Stop bridge successfully."] });
    expect(await bridges("stop", "edge")).toMatchObject({ code: 0, lines: ["Bridge already stopped."] });
    expect((await bridges("list")).lines).toContain("name: edge     status: Stopped");
  });

  it("forwards, add-forward, del-forward; an invalid filter fails", async () => {
    expect(await bridges("forwards", "aws")).toMatchObject({ code: 0, lines: ["topic:   a/#", "topic:   b/c"] });
    expect(await bridges("add-forward", "aws", "x/+/#")).toMatchObject({
      code: 0,
      lines: ["Add-forward topic successfully."],
    });
    expect((await bridges("forwards", "aws")).lines).toEqual(["topic:   a/#", "topic:   b/c", "topic:   x/+/#"]);
    expect(JSON.parse((await bridges("forwards", "aws", "--json")).stdout)).toEqual(["a/#", "b/c", "x/+/#"]);
    expect(await bridges("del-forward", "aws", "x/+/#")).toMatchObject({
      code: 0,
      lines: ["Del-forward topic successfully."],
    });
    expect((await bridges("forwards", "aws")).lines).toEqual(["topic:   a/#", "topic:   b/c"]);
    const bad = await bridges("add-forward", "aws", "a/#/b");
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe("");
    expect(bad.stderr).toBe('Add-forward failed reason: invalid topic filter "a/#/b".\n');
    expect((await bridges("forwards", "edge")).lines).toEqual([]);
  });

  it("subscriptions, add-subscription, del-subscription; a bad QoS fails", async () => {
    expect(await bridges("subscriptions", "aws")).toMatchObject({ code: 0, lines: ["topic: cmd/#, qos: 1"] });
    expect(await bridges("add-subscription", "aws", "ev/+", "2")).toMatchObject({
      code: 0,
      lines: ["Add-subscription topic successfully."],
    });
    expect((await bridges("subscriptions", "aws")).lines).toEqual(["topic: cmd/#, qos: 1", "topic: ev/+, qos: 2"]);
    expect(JSON.parse((await bridges("subscriptions", "aws", "--json")).stdout)).toEqual([
      { topic: "cmd/#", qos: 1 },
      { topic: "ev/+", qos: 2 },
    ]);
    const qos = await bridges("add-subscription", "aws", "ev/x", "3");
    expect(qos.code).toBe(1);
    expect(qos.stderr).toBe("Add-subscription failed reason: qos must be 0, 1 or 2, got 3.\n");
    const filter = await bridges("add-subscription", "aws", "a/#/b", "1");
    expect(filter.code).toBe(1);
    expect(filter.stderr).toMatch(/^Add-subscription failed reason: invalid topic filter/);
    const notNumber = await bridges("add-subscription", "aws", "ev/x", "high");
    expect(notNumber.code).toBe(2);
    expect(await bridges("del-subscription", "aws", "ev/+")).toMatchObject({
      code: 0,
      lines: ["Del-subscription topic successfully."],
    });
    expect((await bridges("subscriptions", "aws")).lines).toEqual(["topic: cmd/#, qos: 1"]);
  });

  it("an unknown bridge fails with exit 1", async () => {
    const start = await bridges("start", "nope");
    expect(start.code).toBe(1);
    expect(start.stdout).toBe("");
    expect(start.stderr).toBe("Start bridge failed: bridge nope not found\n");
    expect((await bridges("stop", "nope")).stderr).toBe("Stop bridge failed: bridge nope not found\n");
    for (const args of [
      ["forwards", "nope"],
      ["add-forward", "nope", "a/b"],
      ["del-forward", "nope", "a/b"],
      ["subscriptions", "nope"],
      ["add-subscription", "nope", "a/b", "1"],
      ["del-subscription", "nope", "a/b"],
    ]) {
      const r = await bridges(...args);
      expect(r.code, args.join(" ")).toBe(1);
      expect(r.stderr, args.join(" ")).toContain("bridge nope not found");
    }
    const arity = await bridges("start");
    expect(arity.code).toBe(2);
    expect(arity.stderr).toContain("svc_ctl bridges start <Name>");
  });

  it("once the plugin is unloaded the list is empty", async () => {
    expect((await ctl(node(), "plugins", "unload", PLUGIN)).code).toBe(0);
    expect(await bridges("list")).toMatchObject({ code: 0, lines: [] });
    expect(JSON.parse((await bridges("list", "--json")).stdout)).toEqual([]);
    expect((await bridges("start", "aws")).code).toBe(1);
  });
});
