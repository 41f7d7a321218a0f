// Plugin lifecycle over the API (spec 000 §3 transitions, §7.2): load / unload / reload on a node
// answer `{code: 0}`; loading a started plugin answers HTTP 500 with exactly
// `{"message":"already_started"}`; the cluster-wide unload and reload; unknown plugins 404.

import { describe, expect, it } from "vitest";
import { connect, expectError, req, uid, useNode } from "./helpers.ts";

describe("plugins over the API", () => {
  const node = useNode();
  const put = (path: string) => req(node(), "PUT", path);
  const on = (op: string, plugin = "svc_retainer") =>
    `/api/v3/nodes/${node().services.nodes.local}/plugins/${plugin}/${op}`;
  const active = async () =>
    (await req(node(), "GET", `/api/v3/nodes/${node().services.nodes.local}/plugins`)).body.data.find(
      (p: { name: string }) => p.name === "svc_retainer",
    ).active;

  it('loading a started plugin: HTTP 500, body exactly {"message":"already_started"}', async () => {
    expect(await active()).toBe(true);
    const a = await put(on("load"));
    expect(a.status).toBe(500);
    expect(a.text).toBe('{"message":"already_started"}');
  });

  it("unload -> active false, load -> active true, reload keeps it active (and working)", async () => {
    expect((await put(on("unload"))).body).toEqual({ code: 0 });
    expect(await active()).toBe(false);
    const again = await put(on("unload"));
    expect(again.status).toBe(500);
    expect(again.body).toEqual({ message: "not_started" });
    expect((await put(on("reload"))).body).toEqual({ message: "not_started" });
    expect((await put(on("load"))).body).toEqual({ code: 0 });
    expect(await active()).toBe(true);
    expect((await put(on("reload"))).body).toEqual({ code: 0 });
    expect(await active()).toBe(true);
    // The reloaded retainer still serves retained messages.
    const topic = `plug/${uid()}`;
    await req(node(), "POST", "/api/v3/mqtt/publish", { body: { topic, payload: "kept", retain: true, qos: 1 } });
    const c = await connect(node(), 4);
    await c.c.subscribeAsync(topic, { qos: 1 });
    expect((await c.inbox.next()).payload).toBe("kept");
    await req(node(), "POST", "/api/v3/mqtt/publish", { body: { topic, payload: "", retain: true } });
  });

  it("cluster-wide PUT /plugins/{plugin}/unload and /reload", async () => {
    expect((await put("/api/v4/plugins/svc_retainer/unload")).body).toEqual({ code: 0 });
    expect(await active()).toBe(false);
    expect((await put("/api/v4/plugins/svc_retainer/reload")).body).toEqual({ message: "not_started" });
    expect((await put(on("load"))).body).toEqual({ code: 0 });
    expect((await put("/api/v4/plugins/svc_retainer/reload")).body).toEqual({ code: 0 });
    expect(await active()).toBe(true);
    const all = await req(node(), "GET", "/api/v4/plugins");
    expect(all.body.data[0].plugins).toContainEqual(expect.objectContaining({ name: "svc_retainer", active: true }));
  });

  it("an unknown plugin is a 404", async () => {
    for (const op of ["load", "unload", "reload"]) expectError(await put(on(op, "svc_nope")), 404, 404);
    expectError(await put("/api/v3/plugins/svc_nope/unload"), 404, 404);
    expectError(await put("/api/v3/plugins/svc_nope/reload"), 404, 404);
  });
});
