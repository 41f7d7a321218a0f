// The rule engine's update endpoints and the rule list: `PUT /rules/{id}` (sql, actions,
// description, enabled), `PUT /rules/{id}/reset_metrics`, `PUT /resources/{id}` (config,
// description; restarted with the new config), and `GET /rules` pagination and filters
// (emqx-facts §3.2: enabled, for, _like_id, _like_for, _match_for, _like_description; newest first).

import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, req, uid, useNode, waitUntil } from "../api/helpers.ts";
import { barrier } from "../conformance/helpers.ts";
import { markerRule } from "./marker-rule.ts";

const node = useNode();
const v4 = "/api/v4";

async function createRule(body: unknown) {
  const r = await req(node(), "POST", `${v4}/rules`, { body });
  expect(r.status, r.text).toBe(200);
  expect(r.body.code, r.text).toBe(0);
  return r.body.data;
}

describe("PUT /rules/{id}", () => {
  it("changes sql, actions, description and enabled; the running rule follows", async () => {
    const t = uid("up");
    const rule = await createRule({
      rawsql: `SELECT * FROM "${t}/a"`,
      actions: [{ name: "republish", params: { target_topic: `${t}/out`, payload_tmpl: "a" } }],
      description: "first",
    });
    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync(`${t}/out`, { qos: 1 });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(`${t}/a`, "x", { qos: 1 });
    expect((await sub.inbox.next()).payload).toBe("a");

    const up = await req(node(), "PUT", `${v4}/rules/${rule.id}`, {
      body: {
        rawsql: `SELECT * FROM "${t}/b"`,
        actions: [{ name: "republish", params: { target_topic: `${t}/out`, payload_tmpl: "b" } }],
        description: "second",
      },
    });
    expect(up.body.code, up.text).toBe(0);
    expect(up.body.data).toMatchObject({ id: rule.id, for: `${t}/b`, description: "second", enabled: true });
    await pub.c.publishAsync(`${t}/a`, "x", { qos: 1 });
    await pub.c.publishAsync(`${t}/b`, "x", { qos: 1 });
    expect((await sub.inbox.next()).payload).toBe("b");

    const off = await req(node(), "PUT", `${v4}/rules/${rule.id}`, { body: { enabled: false } });
    expect(off.body.data.enabled).toBe(false);
    await pub.c.publishAsync(`${t}/b`, "x", { qos: 1 });
    // A marker through the engine after it: nothing was republished before the marker.
    const mark = await markerRule(node(), `${t}/out`);
    expect(await barrier(pub, sub, mark.topic)).toHaveLength(2);
    expect((await sub.inbox.next()).payload).toMatch(/^marker-/);
    await mark.remove();
    const on = await req(node(), "PUT", `${v4}/rules/${rule.id}`, { body: { enabled: true } });
    expect(on.body.data.enabled).toBe(true);
    await pub.c.publishAsync(`${t}/b`, "x", { qos: 1 });
    expect((await sub.inbox.next()).payload).toBe("b");
  });

  it("refuses bad SQL, unknown actions, unknown ids", async () => {
    const rule = await createRule({ rawsql: `SELECT * FROM "x/y"`, actions: [] });
    const sql = await req(node(), "PUT", `${v4}/rules/${rule.id}`, { body: { rawsql: "SELEKT" } });
    expect(sql.body.code).toBe(400);
    expect(sql.body.message).toMatch(/^Bad Arguments: /);
    const act = await req(node(), "PUT", `${v4}/rules/${rule.id}`, { body: { actions: [{ name: "nope" }] } });
    expect(act.body).toMatchObject({ code: 400, message: "Action nope Not Found" });
    const ghost = await req(node(), "PUT", `${v4}/rules/rule:ghost`, { body: { enabled: false } });
    expect(ghost.status).toBe(404);
    expect(ghost.body.code).toBe(404);
    const still = (await req(node(), "GET", `${v4}/rules/${rule.id}`)).body.data;
    expect(still).toMatchObject({ rawsql: `SELECT * FROM "x/y"`, actions: [] });
  });
});

describe("PUT /rules/{id}/reset_metrics", () => {
  it("zeroes the rule's and its actions' metrics", async () => {
    const t = uid("rm");
    const rule = await createRule({ rawsql: `SELECT * FROM "${t}"`, actions: [{ name: "do_nothing" }] });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(t, "1", { qos: 1 });
    await pub.c.publishAsync(t, "2", { qos: 1 });
    await waitUntil(() => node().rules.loadedRule(rule.id)?.actions[0].metrics.success === 2, "two successes");
    let got = (await req(node(), "GET", `${v4}/rules/${rule.id}`)).body.data;
    expect(got.metrics[0]).toMatchObject({ matched: 2, passed: 2 });
    const r = await req(node(), "PUT", `${v4}/rules/${rule.id}/reset_metrics`);
    expect(r.body).toEqual({ code: 0 });
    got = (await req(node(), "GET", `${v4}/rules/${rule.id}`)).body.data;
    expect(got.metrics[0]).toMatchObject({ matched: 0, passed: 0, failed: 0, no_result: 0, speed: 0 });
    expect(got.actions[0].metrics[0]).toMatchObject({ success: 0, failed: 0 });
    await pub.c.publishAsync(t, "3", { qos: 1 });
    await waitUntil(() => node().rules.loadedRule(rule.id)?.actions[0].metrics.success === 1, "counts again");
    expect(node().rules.loadedRule(rule.id)?.metrics.matched).toBe(1);
    const ghost = await req(node(), "PUT", `${v4}/rules/rule:ghost/reset_metrics`);
    expect(ghost.body.code).toBe(404);
  });
});

describe("PUT /resources/{id}", () => {
  let a: Server;
  let b: Server;
  const hits: { server: string; req: IncomingMessage }[] = [];
  const listen = async (name: string) => {
    const s = createServer((rq, rs) => {
      hits.push({ server: name, req: rq });
      rq.resume();
      rq.on("end", () => rs.end("ok"));
    });
    await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
    return s;
  };
  const urlOf = (s: Server) => `http://127.0.0.1:${(s.address() as AddressInfo).port}`;
  beforeAll(async () => {
    a = await listen("a");
    b = await listen("b");
  });
  afterAll(async () => {
    for (const s of [a, b]) await new Promise<void>((r) => s.close(() => r()));
  });

  it("changes config and description; the rules using it follow the new config", async () => {
    const res = (
      await req(node(), "POST", `${v4}/resources`, {
        body: { type: "web_hook", config: { url: `${urlOf(a)}/x` }, description: "A" },
      })
    ).body.data;
    const t = uid("hook");
    await createRule({
      rawsql: `SELECT * FROM "${t}"`,
      actions: [{ name: "data_to_webserver", params: { $resource: res.id } }],
    });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync(t, "1", { qos: 1 });
    await waitUntil(() => hits.some((h) => h.server === "a"), "hit on a");

    const up = await req(node(), "PUT", `${v4}/resources/${res.id}`, {
      body: { config: { url: `${urlOf(b)}/y` }, description: "B" },
    });
    expect(up.body.code, up.text).toBe(0);
    expect(up.body.data).toMatchObject({ id: res.id, type: "web_hook", description: "B" });
    expect(up.body.data.config.url).toBe(`${urlOf(b)}/y`);
    expect(up.body.data.status).toEqual([{ node: "svc@127.0.0.1", is_alive: true }]);
    const shown = (await req(node(), "GET", `${v4}/resources/${res.id}`)).body.data;
    expect(shown).toMatchObject({ description: "B", config: { url: `${urlOf(b)}/y` } });
    const before = hits.length;
    await pub.c.publishAsync(t, "2", { qos: 1 });
    await waitUntil(() => hits.length > before, "a second hit");
    expect(hits.at(-1)).toMatchObject({ server: "b" });
    expect(hits.at(-1)?.req.url).toBe("/y");

    const onlyDescr = await req(node(), "PUT", `${v4}/resources/${res.id}`, { body: { description: "C" } });
    expect(onlyDescr.body.data).toMatchObject({ description: "C", config: { url: `${urlOf(b)}/y` } });
  });

  it("refuses a bad config and unknown ids", async () => {
    const res = (
      await req(node(), "POST", `${v4}/resources`, {
        body: { type: "web_hook", config: { url: `${urlOf(a)}/x` } },
      })
    ).body.data;
    const bad = await req(node(), "PUT", `${v4}/resources/${res.id}`, { body: { config: { url: 5 } } });
    expect(bad.body.code).toBe(400);
    expect((await req(node(), "GET", `${v4}/resources/${res.id}`)).body.data.config.url).toBe(`${urlOf(a)}/x`);
    const ghost = await req(node(), "PUT", `${v4}/resources/resource:ghost`, { body: { description: "x" } });
    expect(ghost.body.code).toBe(404);
  });
});

describe("GET /rules", () => {
  it("pages newest first and filters", async () => {
    const t = uid("flt");
    const ids: string[] = [];
    const specs = [
      { rawsql: `SELECT * FROM "${t}/a/1"`, description: `${t} alpha`, enabled: true },
      { rawsql: `SELECT * FROM "${t}/a/2"`, description: `${t} beta`, enabled: false },
      { rawsql: `SELECT * FROM "${t}/b/#"`, description: `${t} gamma`, enabled: true },
      { rawsql: `SELECT * FROM "${t}/c", "$events/client_connected"`, description: `${t} delta`, enabled: true },
    ];
    for (const [i, s] of specs.entries()) {
      const made = await createRule({ ...s, id: `rule:${t}-${i}`, actions: [] });
      ids.push(made.id);
      // Newest first is by created_at (ms): the next rule is created on a later millisecond.
      await waitUntil(() => Date.now() > made.created_at, "the clock to pass the rule's created_at");
    }
    const list = async (q: string, base = `_like_description=${t}`) => {
      const r = await req(node(), "GET", `${v4}/rules?${base}${q}`);
      expect(r.body.code, r.text).toBe(0);
      return r.body as { data: { id: string }[]; meta: { page: number; limit: number; count: number } };
    };
    const all = await list("");
    expect(all.data.map((r) => r.id)).toEqual([...ids].reverse());
    expect(all.meta).toMatchObject({ page: 1, count: 4 });

    const p1 = await list("&_limit=3");
    expect(p1.data.map((r) => r.id)).toEqual([ids[3], ids[2], ids[1]]);
    expect(p1.meta).toEqual({ page: 1, limit: 3, count: 4 });
    const p2 = await list("&_limit=3&_page=2");
    expect(p2.data.map((r) => r.id)).toEqual([ids[0]]);
    expect(p2.meta).toEqual({ page: 2, limit: 3, count: 4 });

    const ids_ = async (q: string, base?: string) => (await list(q, base)).data.map((r) => r.id).sort();
    expect(await ids_("&enabled=false")).toEqual([ids[1]]);
    expect(await ids_("&enabled=true")).toEqual([ids[0], ids[2], ids[3]].sort());
    expect(await ids_(`&for=${encodeURIComponent(`${t}/a/1`)}`)).toEqual([ids[0]]);
    expect(await ids_(`&for=${encodeURIComponent("$events/client_connected")}`)).toEqual([ids[3]]);
    expect(await ids_("&_like_for=/a/")).toEqual([ids[0], ids[1]]);
    expect(await ids_(`&_match_for=${encodeURIComponent(`${t}/a/+`)}`)).toEqual([ids[0], ids[1]]);
    expect(await ids_(`&_match_for=${encodeURIComponent(`${t}/#`)}`)).toEqual(ids.slice().sort());
    expect(await ids_(`&_like_id=${encodeURIComponent(`${t}-2`)}`)).toEqual([ids[2]]);
    expect(await ids_("", `_like_description=${encodeURIComponent(`${t} gamma`)}`)).toEqual([ids[2]]);
    expect(await ids_("&enabled=true&_like_for=/a/")).toEqual([ids[0]]);

    const badBool = await req(node(), "GET", `${v4}/rules?enabled=maybe`);
    expect(badBool.status).toBe(400);
  });
});
