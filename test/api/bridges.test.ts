// The `/bridges` routes on a real node with the bridge plugin (svc_bridge_mqtt) loaded through the
// API: two MQTT bridges point at a closed local port, `aws` started with the plugin (auto, so it
// keeps Connecting) and `edge` manual (Stopped). List and lookup, start/stop and their
// already-started/stopped answers, forwards and subscriptions added, listed and removed, bad
// filters and QoS (400), unknown bridges (404), and no bridge once the plugin is unloaded.

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeTwoBridges } from "../helpers/bridge-fixture.ts";
import { type Answer, expectError, expectShape, req, useNode } from "./helpers.ts";

const PLUGIN = "svc_bridge_mqtt";
const etcDir = mkdtempSync(join(tmpdir(), "svc-bridges-etc-"));
afterAll(() => rmSync(etcDir, { recursive: true, force: true }));

const BRIDGE = {
  name: "string",
  kind: "string",
  address: "string",
  status: "string",
  forwards: "array",
  subscriptions: "array",
  queued: "int",
  inflight: "int",
  forwarded: "int",
  received: "int",
  dropped: "int",
  refused: "int",
} as const;

describe("bridges over the API", () => {
  const node = useNode({ "plugins.etc_dir": etcDir });
  let address = "";
  const call = (method: string, path: string, body?: unknown): Promise<Answer> =>
    req(node(), method, `/api/v3${path}`, body === undefined ? {} : { body });
  const plugin = (op: "load" | "unload") =>
    req(node(), "PUT", `/api/v3/nodes/${node().services.nodes.local}/plugins/${PLUGIN}/${op}`);
  const status = async (name: string) => (await call("GET", `/bridges/${name}`)).body.data.status;
  const enc = encodeURIComponent;

  beforeAll(async () => {
    address = await writeTwoBridges(etcDir);
    expect((await plugin("load")).body).toEqual({ code: 0 });
  });

  it("the catalogue lists the bridge routes", () => {
    const keys = node().api.catalogue.v3.map((e) => `${e.method} ${e.path}`);
    expect(keys).toEqual(
      expect.arrayContaining([
        "GET /bridges",
        "GET /bridges/{name}",
        "PUT /bridges/{name}/start",
        "PUT /bridges/{name}/stop",
        "GET /bridges/{name}/forwards",
        "POST /bridges/{name}/forwards",
        "DELETE /bridges/{name}/forwards/{topic}",
        "GET /bridges/{name}/subscriptions",
        "POST /bridges/{name}/subscriptions",
        "DELETE /bridges/{name}/subscriptions/{topic}",
      ]),
    );
  });

  it("GET /bridges lists both: the auto one Connecting, the manual one Stopped", async () => {
    for (const base of ["/api/v3", "/api/v4"]) {
      const a = await req(node(), "GET", `${base}/bridges`);
      expect(a.status).toBe(200);
      expect(a.body.code).toBe(0);
      for (const b of a.body.data) expectShape(b, BRIDGE, `bridge ${b.name}`);
      expect(a.body.data).toEqual([
        expect.objectContaining({
          name: "aws",
          kind: "mqtt",
          address,
          status: "Connecting",
          forwards: ["a/#", "b/c"],
          subscriptions: [{ topic: "cmd/#", qos: 1 }],
        }),
        expect.objectContaining({
          name: "edge",
          kind: "mqtt",
          address,
          status: "Stopped",
          forwards: [],
          subscriptions: [],
        }),
      ]);
    }
    const one = await call("GET", "/bridges/edge");
    expect(one.status).toBe(200);
    expectShape(one.body.data, BRIDGE, "bridge lookup");
    expect(one.body.data).toMatchObject({ name: "edge", status: "Stopped", queued: 0, forwarded: 0 });
  });

  it("start and stop answer changed, false when started or stopped already", async () => {
    expect((await call("PUT", "/bridges/edge/start")).body).toEqual({ code: 0, data: { changed: true } });
    expect(await status("edge")).toBe("Connecting");
    expect((await call("PUT", "/bridges/edge/start")).body).toEqual({ code: 0, data: { changed: false } });
    expect((await call("PUT", "/bridges/aws/start")).body).toEqual({ code: 0, data: { changed: false } });
    expect((await call("PUT", "/bridges/edge/stop")).body).toEqual({ code: 0, data: { changed: true } });
    expect(await status("edge")).toBe("Stopped");
    expect((await call("PUT", "/bridges/edge/stop")).body).toEqual({ code: 0, data: { changed: false } });
  });

  it("forwards: list, add (twice: unchanged), delete by URL-encoded filter", async () => {
    expect((await call("GET", "/bridges/aws/forwards")).body).toEqual({ code: 0, data: ["a/#", "b/c"] });
    expect((await call("POST", "/bridges/aws/forwards", { topic: "x/+/#" })).body).toEqual({
      code: 0,
      data: { changed: true },
    });
    expect((await call("POST", "/bridges/aws/forwards", { topic: "x/+/#" })).body.data).toEqual({ changed: false });
    expect((await call("GET", "/bridges/aws/forwards")).body.data).toEqual(["a/#", "b/c", "x/+/#"]);
    expect((await call("GET", "/bridges/aws")).body.data.forwards).toEqual(["a/#", "b/c", "x/+/#"]);
    expect((await call("DELETE", `/bridges/aws/forwards/${enc("x/+/#")}`)).body).toEqual({
      code: 0,
      data: { changed: true },
    });
    expect((await call("DELETE", `/bridges/aws/forwards/${enc("x/+/#")}`)).body.data).toEqual({ changed: false });
    expect((await call("DELETE", `/bridges/aws/forwards/${enc("b/c")}`)).body.data).toEqual({ changed: true });
    expect((await call("GET", "/bridges/aws/forwards")).body.data).toEqual(["a/#"]);
    expect((await call("POST", "/bridges/aws/forwards", { topic: "b/c" })).body.data).toEqual({ changed: true });
  });

  it("forwards: an invalid or shared filter is a 400, a missing topic too", async () => {
    const bad = await call("POST", "/bridges/aws/forwards", { topic: "a/#/b" });
    expectError(bad, 400, 115);
    expect(bad.body.message).toContain("a/#/b");
    expectError(await call("POST", "/bridges/aws/forwards", { topic: "$share/g/t" }), 400, 115);
    expectError(await call("POST", "/bridges/aws/forwards", {}), 400, 107);
    expect((await call("GET", "/bridges/aws/forwards")).body.data).toEqual(["a/#", "b/c"]);
  });

  it("subscriptions: list, add, bad filter or QoS (400), delete by URL-encoded filter", async () => {
    expect((await call("GET", "/bridges/aws/subscriptions")).body).toEqual({
      code: 0,
      data: [{ topic: "cmd/#", qos: 1 }],
    });
    expect((await call("POST", "/bridges/aws/subscriptions", { topic: "ev/+", qos: 2 })).body).toEqual({
      code: 0,
      data: { changed: true },
    });
    expect((await call("GET", "/bridges/aws/subscriptions")).body.data).toEqual([
      { topic: "cmd/#", qos: 1 },
      { topic: "ev/+", qos: 2 },
    ]);
    const qos = await call("POST", "/bridges/aws/subscriptions", { topic: "ev/x", qos: 3 });
    expectError(qos, 400, 116);
    expect(qos.body.message).toContain("qos");
    expectError(await call("POST", "/bridges/aws/subscriptions", { topic: "a/#/b", qos: 0 }), 400, 115);
    // The same filter and QoS again changes nothing.
    expect((await call("POST", "/bridges/aws/subscriptions", { topic: "ev/+", qos: 2 })).body.data).toEqual({
      changed: false,
    });
    expectError(await call("POST", "/bridges/aws/subscriptions", { topic: "ev/x" }), 400, 107);
    expect((await call("DELETE", `/bridges/aws/subscriptions/${enc("ev/+")}`)).body).toEqual({
      code: 0,
      data: { changed: true },
    });
    expect((await call("DELETE", `/bridges/aws/subscriptions/${enc("ev/+")}`)).body.data).toEqual({
      changed: false,
    });
    expect((await call("GET", "/bridges/aws/subscriptions")).body.data).toEqual([{ topic: "cmd/#", qos: 1 }]);
  });

  it("an unknown bridge is a 404 on every route", async () => {
    const routes: [string, string, unknown?][] = [
      ["GET", "/bridges/nope"],
      ["PUT", "/bridges/nope/start"],
      ["PUT", "/bridges/nope/stop"],
      ["GET", "/bridges/nope/forwards"],
      ["POST", "/bridges/nope/forwards", { topic: "a/b" }],
      ["DELETE", `/bridges/nope/forwards/${enc("a/b")}`],
      ["GET", "/bridges/nope/subscriptions"],
      ["POST", "/bridges/nope/subscriptions", { topic: "a/b", qos: 1 }],
      ["DELETE", `/bridges/nope/subscriptions/${enc("a/b")}`],
    ];
    for (const [method, path, body] of routes) {
      const a = await call(method, path, body);
      expectError(a, 404, 404);
      expect(a.body.message, `${method} ${path}`).toBe("bridge nope not found");
    }
  });

  it("once the plugin is unloaded there is no bridge", async () => {
    expect((await plugin("unload")).body).toEqual({ code: 0 });
    expect((await call("GET", "/bridges")).body).toEqual({ code: 0, data: [] });
    expectError(await call("GET", "/bridges/aws"), 404, 404);
    expectError(await call("PUT", "/bridges/aws/start"), 404, 404);
  });
});
