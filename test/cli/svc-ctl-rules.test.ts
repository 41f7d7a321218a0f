// svc_ctl's rule-engine groups end to end: the real tool against a real node: `rules`,
// `rule-actions`, `resources`, `resource-types`, in the family's lines and with --json, exit codes,
// and the failures (bad arguments, bad JSON, unknown ids, refused requests).
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { connect, useNode } from "../conformance/helpers.ts";
import { ctl, run } from "./ctl.ts";

const node = useNode();
const NAME = "svc@127.0.0.1";

let server: Server;
let url = "";
beforeAll(async () => {
  server = createServer((_req, res) => res.end("ok"));
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe("svc_ctl rules", () => {
  it("help lists the rule engine's groups", async () => {
    const r = await run(["help"]);
    for (const g of ["rules create", "rule-actions list", "resources create", "resource-types show"])
      expect(r.lines.some((l) => l.startsWith(`svc_ctl ${g}`))).toBe(true);
    for (const l of r.lines.filter((x) => x.startsWith("svc_ctl "))) expect(l.indexOf("# "), l).toBe(70);
    const g = await run(["rules", "help"]);
    expect(g.code).toBe(0);
    expect(g.lines[0]).toBe(`${"svc_ctl rules list".padEnd(70)}# List rules`);
  });

  it("create, list, show, update, delete; the rule fires", async () => {
    const actions = JSON.stringify([
      { name: "republish", params: { target_topic: "cli/out", target_qos: 1, payload_tmpl: "got ${payload}" } },
    ]);
    const c = await ctl(node(), "rules", "create", `SELECT * FROM "cli/in"`, actions, "-d", "from the cli");
    expect(c.code, c.stderr).toBe(0);
    expect(c.lines).toHaveLength(1);
    const m = /^Rule (rule:[0-9a-f]{8}) created$/.exec(c.lines[0]);
    expect(m).not.toBeNull();
    const id = m?.[1] ?? "";

    const sub = await connect(node(), 5);
    await sub.c.subscribeAsync("cli/out", { qos: 1 });
    const pub = await connect(node(), 5);
    await pub.c.publishAsync("cli/in", "x", { qos: 1 });
    expect((await sub.inbox.next()).payload).toBe("got x");

    const show = await ctl(node(), "rules", "show", id);
    expect(show.code).toBe(0);
    expect(show.lines).toHaveLength(1);
    const line = show.lines[0];
    expect(line.startsWith(`rule(id='${id}', for='cli/in', rawsql='SELECT * FROM "cli/in"', actions=[{`)).toBe(true);
    expect(line).toContain(`"name":"republish"`);
    expect(line).toContain(`, on_action_failed='continue', metrics=[#{`);
    expect(line).toContain(`node => '${NAME}'`);
    expect(line).toMatch(/matched => 1,/);
    expect(line.endsWith(`, enabled='true', description='from the cli')`)).toBe(true);

    const list = await ctl(node(), "rules", "list");
    expect(list.code).toBe(0);
    expect(list.lines.some((l) => l.startsWith(`rule(id='${id}',`))).toBe(true);
    const json = await ctl(node(), "rules", "list", "--json");
    const rows = JSON.parse(json.stdout) as { id: string; description: string }[];
    expect(rows.find((r) => r.id === id)?.description).toBe("from the cli");

    const up = await ctl(
      node(),
      "rules",
      "update",
      id,
      "-e",
      "false",
      "-d",
      "off now",
      "-s",
      `SELECT * FROM "cli/in2"`,
    );
    expect(up).toMatchObject({ code: 0, lines: [`Rule ${id} updated`] });
    const j = JSON.parse((await ctl(node(), "rules", "show", id, "--json")).stdout);
    expect(j).toMatchObject({ id, enabled: false, description: "off now", for: "cli/in2" });
    const up2 = await ctl(
      node(),
      "rules",
      "update",
      id,
      "-a",
      JSON.stringify([{ name: "do_nothing" }]),
      "-g",
      "stop",
      "--json",
    );
    expect(up2.code).toBe(0);
    expect(JSON.parse(up2.stdout)).toMatchObject({ actions: [{ name: "do_nothing" }], on_action_failed: "stop" });

    const del = await ctl(node(), "rules", "delete", id);
    expect(del).toMatchObject({ code: 0, lines: ["ok"] });
    const gone = await ctl(node(), "rules", "show", id);
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim()).toBe("Not Found.");
  });

  it("create with -i, -e, -g, --json", async () => {
    const r = await ctl(
      node(),
      "rules",
      "create",
      `SELECT 1 FROM "t/#"`,
      "[]",
      "-i",
      "rule:cli1",
      "-e",
      "false",
      "-g",
      "stop",
      "--json",
    );
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ id: "rule:cli1", enabled: false, on_action_failed: "stop" });
    const dup = await ctl(node(), "rules", "create", `SELECT 1 FROM "t/#"`, "[]", "-i", "rule:cli1");
    expect(dup.code).toBe(1);
    expect(dup.stderr.trim()).toBe("Already Exists");
    await ctl(node(), "rules", "delete", "rule:cli1");
  });

  it("failures: bad SQL, bad JSON, unknown action, arguments, unknown id", async () => {
    const sql = await ctl(node(), "rules", "create", "SELEKT * FROM x", "[]");
    expect(sql.code).toBe(1);
    expect(sql.stderr.trim().split("\n")).toHaveLength(1);
    expect(sql.stderr).toMatch(/^Bad Arguments: /);
    const json = await ctl(node(), "rules", "create", `SELECT * FROM "a"`, "[{");
    expect(json.code).toBe(2);
    expect(json.stderr).toContain("actions is not valid JSON");
    const notArr = await ctl(node(), "rules", "create", `SELECT * FROM "a"`, "{}");
    expect(notArr.code).toBe(2);
    const act = await ctl(node(), "rules", "create", `SELECT * FROM "a"`, `[{"name":"nope"}]`);
    expect(act.code).toBe(1);
    expect(act.stderr.trim()).toBe("Action nope Not Found");
    expect((await ctl(node(), "rules", "create", `SELECT * FROM "a"`)).code).toBe(2);
    expect((await ctl(node(), "rules", "create", `SELECT * FROM "a"`, "[]", "-x", "y")).code).toBe(2);
    expect((await ctl(node(), "rules", "create", `SELECT * FROM "a"`, "[]", "-d")).code).toBe(2);
    expect((await ctl(node(), "rules", "create", `SELECT * FROM "a"`, "[]", "-e", "maybe")).code).toBe(2);
    expect((await ctl(node(), "rules", "update", "rule:ghost")).code).toBe(2);
    const upGhost = await ctl(node(), "rules", "update", "rule:ghost", "-d", "x");
    expect(upGhost.code).toBe(1);
    expect(upGhost.stderr.trim()).toBe("Not Found.");
    const delGhost = await ctl(node(), "rules", "delete", "rule:ghost");
    expect(delGhost.code).toBe(1);
    expect(delGhost.stderr.trim()).toBe("Not Found.");
    const sub = await ctl(node(), "rules", "frob");
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("unknown rules subcommand: frob");
  });
});

describe("svc_ctl rule-actions and resource-types", () => {
  it("rule-actions list [-k], show", async () => {
    const all = await ctl(node(), "rule-actions", "list");
    expect(all.code).toBe(0);
    expect(all.lines).toContain(
      "action(name='do_nothing', app='svc_rule_engine', for='$any', types=[], title ='Do Nothing (debug)', description='This action does nothing')",
    );
    const show = await ctl(node(), "rule-actions", "show", "data_to_webserver");
    expect(show.code).toBe(0);
    expect(show.lines[0]).toMatch(
      /^action\(name='data_to_webserver', app='\S+', for='\S+', types=\[web_hook\], title ='/,
    );
    const k = await ctl(node(), "rule-actions", "list", "-k", "client.connected", "--json");
    const names = (JSON.parse(k.stdout) as { name: string }[]).map((a) => a.name);
    expect(names).toContain("inspect");
    expect(names.length).toBeLessThanOrEqual(all.lines.length);
    const ghost = await ctl(node(), "rule-actions", "show", "nope");
    expect(ghost).toMatchObject({ code: 1, stdout: "" });
    expect(ghost.stderr.trim()).toBe("Not Found.");
    expect((await ctl(node(), "rule-actions", "list", "-k")).code).toBe(2);
  });

  it("resource-types list, show", async () => {
    const all = await ctl(node(), "resource-types", "list");
    expect(all.code).toBe(0);
    expect(
      all.lines.some((l) =>
        /^resource_type\(name='web_hook', provider='\S+', title ='WebHook', description='WebHook'\)$/.test(l),
      ),
    ).toBe(true);
    const show = await ctl(node(), "resource-types", "show", "web_hook", "--json");
    expect(JSON.parse(show.stdout)).toMatchObject({ name: "web_hook", title: "WebHook" });
    const ghost = await ctl(node(), "resource-types", "show", "nope");
    expect(ghost.code).toBe(1);
    expect(ghost.stderr.trim()).toBe("Not Found.");
  });
});

describe("svc_ctl resources", () => {
  it("create, list [-t], show, delete (refused while a rule uses it)", async () => {
    const c = await ctl(node(), "resources", "create", "web_hook", "-c", JSON.stringify({ url }), "-d", "hook");
    expect(c.code, c.stderr).toBe(0);
    const m = /^Resource (resource:[0-9a-f]{8}) created$/.exec(c.lines[0] ?? "");
    expect(m).not.toBeNull();
    const id = m?.[1] ?? "";

    const show = await ctl(node(), "resources", "show", id);
    expect(show.code).toBe(0);
    expect(show.lines[0]).toMatch(
      new RegExp(
        `^resource\\(id='${id}', type='web_hook', config=#\\{.*<<"url">> => <<"${url.replace(/[/.]/g, "\\$&")}">>.*\\}, status=\\[#\\{is_alive => (true|false),node => '${NAME}'\\}\\], description='hook'\\)$`,
      ),
    );
    const list = await ctl(node(), "resources", "list");
    expect(
      list.lines.some((l) => l.startsWith(`resource(id='${id}', type='web_hook'`) && l.includes(`node => '${NAME}'`)),
    ).toBe(true);
    const byType = await ctl(node(), "resources", "list", "-t", "web_hook", "--json");
    expect((JSON.parse(byType.stdout) as { id: string }[]).map((r) => r.id)).toContain(id);
    const badType = await ctl(node(), "resources", "list", "-t", "nope");
    expect(badType.code).toBe(1);

    const rule = await ctl(
      node(),
      "rules",
      "create",
      `SELECT * FROM "hook/#"`,
      JSON.stringify([{ name: "data_to_webserver", params: { $resource: id } }]),
    );
    expect(rule.code, rule.stderr).toBe(0);
    const ruleId = rule.lines[0].split(" ")[1];
    const refused = await ctl(node(), "resources", "delete", id);
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim()).toBe(`Found rules [<<"${ruleId}">>] depends on this resource, disable them first`);
    expect((await ctl(node(), "rules", "delete", ruleId)).code).toBe(0);
    expect(await ctl(node(), "resources", "delete", id)).toMatchObject({ code: 0, lines: ["ok"] });
    const gone = await ctl(node(), "resources", "show", id);
    expect(gone.code).toBe(1);
    expect(gone.stderr.trim()).toBe("Not Found.");
  });

  it("create with -i and --json; failures", async () => {
    const c = await ctl(
      node(),
      "resources",
      "create",
      "web_hook",
      "-i",
      "resource:cli",
      "-c",
      JSON.stringify({ url }),
      "--json",
    );
    expect(c.code, c.stderr).toBe(0);
    expect(JSON.parse(c.stdout)).toMatchObject({ id: "resource:cli", type: "web_hook", config: { url } });
    await ctl(node(), "resources", "delete", "resource:cli");
    const noType = await ctl(node(), "resources", "create", "nope");
    expect(noType.code).toBe(1);
    expect(noType.stderr.trim()).toBe("Bad Arguments: Resource Type Not Found: nope");
    const noUrl = await ctl(node(), "resources", "create", "web_hook");
    expect(noUrl.code).toBe(1);
    expect(noUrl.stderr).toMatch(/^Bad Arguments: /);
    expect((await ctl(node(), "resources", "create", "web_hook", "-c", "{")).code).toBe(2);
    expect((await ctl(node(), "resources", "create", "web_hook", "-c", "[]")).code).toBe(2);
    expect((await ctl(node(), "resources", "create")).code).toBe(2);
    expect((await ctl(node(), "resources", "delete", "resource:ghost")).code).toBe(1);
  });
});
