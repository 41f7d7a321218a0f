// svc_ctl end to end: the real tool (a child process) against a real node's management port, for
// every command group: output in the family's formats, --json, exit codes, and the failures (node
// down, bad arguments, unknown objects).

import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { useTempDir } from "../config/temp-dir.ts";
import { connect, uid, useNode, waitUntil } from "../conformance/helpers.ts";
import { ctl, run } from "./ctl.ts";

const node = useNode();
/** A fresh directory per test, removed after it. */
const tmp = useTempDir();
const NAME = "svc@127.0.0.1";

describe("svc_ctl: help and arguments", () => {
  it("help lists every group's usage lines padded to 70 columns", async () => {
    const r = await run(["help"]);
    expect(r.code).toBe(0);
    const usage = r.lines.filter((l) => l.startsWith("svc_ctl "));
    for (const g of ["status", "broker", "cluster", "clients", "subscriptions", "routes", "plugins", "listeners"])
      expect(
        usage.some((l) => l.startsWith(`svc_ctl ${g}`)),
        g,
      ).toBe(true);
    for (const l of usage) expect(l.indexOf("# "), l).toBe(70);
  });

  it("<group> help lists that group's usage lines", async () => {
    const r = await run(["clients", "help"]);
    expect(r.code).toBe(0);
    expect(r.lines).toEqual([
      `${"svc_ctl clients list".padEnd(70)}# List all clients`,
      `${"svc_ctl clients show <ClientId>".padEnd(70)}# Show a client`,
      `${"svc_ctl clients kick <ClientId>".padEnd(70)}# Kick out a client`,
    ]);
  });

  it("bad arguments: a reason and the usage, exit 2", async () => {
    const unknown = await run(["bogus"]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr.split("\n")[0]).toBe("svc_ctl: unknown command: bogus");
    const sub = await ctl(node(), "clients", "frobnicate");
    expect(sub.code).toBe(2);
    expect(sub.stderr).toContain("unknown clients subcommand: frobnicate");
    expect(sub.stderr).toContain("svc_ctl clients kick <ClientId>");
    const arity = await ctl(node(), "clients", "show");
    expect(arity.code).toBe(2);
    const qos = await ctl(node(), "subscriptions", "add", "c", "t", "3");
    expect(qos.code).toBe(2);
    expect(qos.stderr).toContain("bad QoS");
    const port = await run(["status", "--port", "nope"]);
    expect(port.code).toBe(2);
  });

  it("node down: exit 1 with one line", async () => {
    const r = await run(["status", "--host", "127.0.0.1", "--port", "1"]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe("");
    const lines = r.stderr.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/^Node is not running or unreachable: http:\/\/127\.0\.0\.1:1 /);
  });

  it("reads the port and credentials from the configuration (SVC_ variables), overrides win", async () => {
    const port = String(node().managementPort("http"));
    const ok = await run(["status"], { SVC_MANAGEMENT__LISTENER__HTTP: `127.0.0.1:${port}` });
    expect(ok.code).toBe(0);
    const badSecret = await run(["status"], {
      SVC_MANAGEMENT__LISTENER__HTTP: `127.0.0.1:${port}`,
      SVC_MANAGEMENT__DEFAULT_APPLICATION__SECRET: "wrong",
    });
    expect(badSecret.code).toBe(1);
    expect(badSecret.stderr).toContain("authentication failed");
    const fixed = await run(["status", "--password", "public"], {
      SVC_MANAGEMENT__LISTENER__HTTP: `127.0.0.1:${port}`,
      SVC_MANAGEMENT__DEFAULT_APPLICATION__SECRET: "wrong",
    });
    expect(fixed.code).toBe(0);
    const off = await run(["status"], { SVC_MANAGEMENT__LISTENER__HTTP: "off" });
    expect(off.code).toBe(1);
    expect(off.stderr).toContain("management.listener.http");
  });
});

describe("svc_ctl: node", () => {
  it("status", async () => {
    const r = await ctl(node(), "status");
    expect(r).toMatchObject({ code: 0, lines: [`Node '${NAME}' 0.1.0 is started`] });
    const j = await ctl(node(), "status", "--json");
    expect(JSON.parse(j.stdout)).toEqual({ node: NAME, version: "0.1.0", status: "started", running: true });
  });

  it("broker, broker stats, broker metrics", async () => {
    const b = await ctl(node(), "broker");
    expect(b.code).toBe(0);
    expect(b.lines[0]).toBe("sysdescr  : svc");
    expect(b.lines[1]).toBe("version   : 0.1.0");
    expect(b.lines[2]).toMatch(/^uptime {4}: /);
    expect(b.lines[3]).toMatch(/^datetime {2}: \d{4}-\d\d-\d\d \d\d:\d\d:\d\d$/);
    const s = await ctl(node(), "broker", "stats");
    expect(s.code).toBe(0);
    expect(s.lines).toContain(`${"connections.count".padEnd(30)}: 0`);
    const names = s.lines.map((l) => l.slice(0, 30).trim());
    expect(names).toEqual([...names].sort());
    const m = await ctl(node(), "broker", "metrics", "--json");
    expect(m.code).toBe(0);
    expect(typeof JSON.parse(m.stdout)["messages.received"]).toBe("number");
  });

  it("cluster status and force-leave", async () => {
    const s = await ctl(node(), "cluster", "status");
    expect(s).toMatchObject({
      code: 0,
      lines: [`Cluster status: #{running_nodes => ['${NAME}'], stopped_nodes => []}`],
    });
    const self = await ctl(node(), "cluster", "force-leave", NAME);
    expect(self.code).toBe(1);
    expect(self.stderr).toMatch(/^Failed to remove the node from cluster, error: node is running/);
    const other = await ctl(node(), "cluster", "force-leave", "ghost@10.0.0.9");
    expect(other.code).toBe(1);
    expect(other.stderr).toContain("Failed to remove the node from cluster");
  });

  it("vm and its groups", async () => {
    const all = await ctl(node(), "vm");
    expect(all.code).toBe(0);
    const keys = all.lines.map((l) => l.split(":")[0].trim());
    expect(keys).toEqual([
      "cpu/load1",
      "cpu/load5",
      "cpu/load15",
      "memory/total",
      "memory/used",
      "process/limit",
      "process/count",
      "io/max_fds",
      "io/active_fds",
      "ports/count",
      "ports/limit",
    ]);
    const load = await ctl(node(), "vm", "load");
    expect(load.lines.map((l) => l.split(":")[0].trim())).toEqual(["cpu/load1", "cpu/load5", "cpu/load15"]);
    expect((await ctl(node(), "vm", "nope")).code).toBe(2);
  });

  it("listeners", async () => {
    const r = await ctl(node(), "listeners");
    expect(r.code).toBe(0);
    const tcp = `127.0.0.1:${node().port("tcp")}`;
    const i = r.lines.indexOf(`mqtt:tcp:${tcp}`);
    expect(i).toBeGreaterThanOrEqual(0);
    expect(r.lines.slice(i + 1, i + 6).map((l) => l.slice(0, 20))).toEqual([
      "  listen_on       : ",
      "  acceptors       : ",
      "  max_conns       : ",
      "  current_conn    : ",
      "  shutdown_count  : ",
    ]);
  });
});

describe("svc_ctl: clients, subscriptions, routes", () => {
  it("clients list|show|kick, Not Found.", async () => {
    const id = uid("cli");
    const c = await connect(node(), 4, { clientId: id, username: "u1" });
    const list = await ctl(node(), "clients", "list");
    expect(list.code).toBe(0);
    const line = list.lines.find((l) => l.startsWith(`Client(${id}, `));
    expect(line).toMatch(
      /^Client\(\S+, username=u1, peername=127\.0\.0\.1:\d+, clean_start=true, keepalive=60, session_expiry_interval=0, subscriptions=0, inflight=0, awaiting_rel=0, delivered_msgs=0, enqueued_msgs=0, dropped_msgs=0, connected=true, created_at=.+, connected_at=.+\)$/,
    );
    const show = await ctl(node(), "clients", "show", id);
    expect(show.lines).toEqual([line]);
    const json = await ctl(node(), "clients", "show", id, "--json");
    expect(JSON.parse(json.stdout).clientid).toBe(id);
    expect(await ctl(node(), "clients", "kick", id)).toMatchObject({ code: 0, lines: ["ok"] });
    await waitUntil(() => !c.c.connected, "kicked");
    for (const sub of ["show", "kick"]) {
      const r = await ctl(node(), "clients", sub, "nobody-here");
      expect(r.code).toBe(1);
      expect(r.stderr).toBe("Not Found.\n");
    }
  });

  it("subscriptions add|show|list|del and routes list|show", async () => {
    const id = uid("sub");
    await connect(node(), 4, { clientId: id });
    const topic = `cli/${id}/t`;
    expect(await ctl(node(), "subscriptions", "add", id, topic, "1")).toMatchObject({ code: 0, lines: ["ok"] });
    expect((await ctl(node(), "subscriptions", "show", id)).lines).toEqual([`${id} -> ${topic}`]);
    expect((await ctl(node(), "subscriptions", "list")).lines).toContain(`${id} -> ${topic}`);
    expect((await ctl(node(), "routes", "list")).lines).toContain(`${topic} -> ${NAME}`);
    expect((await ctl(node(), "routes", "show", topic)).lines).toEqual([`${topic} -> ${NAME}`]);
    const rj = await ctl(node(), "routes", "show", topic, "--json");
    expect(JSON.parse(rj.stdout)).toEqual([{ topic, node: NAME }]);
    expect(await ctl(node(), "subscriptions", "del", id, topic)).toMatchObject({ code: 0, lines: ["ok"] });
    const none = await ctl(node(), "subscriptions", "show", id);
    expect(none).toMatchObject({ code: 1, stderr: "Not Found.\n" });
    expect(await ctl(node(), "routes", "show", topic)).toMatchObject({ code: 1, stderr: "Not Found.\n" });
    const offline = await ctl(node(), "subscriptions", "add", "not-connected", "a/b", "0");
    expect(offline.code).toBe(1);
    expect(offline.stderr.trim().split("\n")).toHaveLength(1);
  });
});

describe("svc_ctl: plugins, acl", () => {
  it("plugins list|unload|load|reload, errors", async () => {
    const list = await ctl(node(), "plugins", "list");
    expect(list.lines).toContain(
      "Plugin(svc_auth_clientid, version=0.1.0, description=Authentication with client id and password, active=false)",
    );
    expect(await ctl(node(), "plugins", "load", "svc_auth_clientid")).toMatchObject({
      code: 0,
      lines: ["Plugin svc_auth_clientid loaded successfully."],
    });
    const again = await ctl(node(), "plugins", "load", "svc_auth_clientid");
    expect(again).toMatchObject({ code: 1, stderr: "Load plugin svc_auth_clientid error: already_started\n" });
    expect((await ctl(node(), "plugins", "reload", "svc_auth_clientid")).lines).toEqual([
      "Plugin svc_auth_clientid reloaded successfully.",
    ]);
    expect((await ctl(node(), "plugins", "unload", "svc_auth_clientid")).lines).toEqual([
      "Plugin svc_auth_clientid unloaded successfully.",
    ]);
    expect(await ctl(node(), "plugins", "unload", "svc_auth_clientid")).toMatchObject({
      code: 1,
      stderr: "Unload plugin svc_auth_clientid error: not_started\n",
    });
    expect(await ctl(node(), "plugins", "load", "no_such")).toMatchObject({
      code: 1,
      stderr: "Load plugin no_such error: not_found\n",
    });
  });

  it("acl cache-clean all|<ClientId>", async () => {
    expect(await ctl(node(), "acl", "cache-clean", "all")).toMatchObject({
      code: 0,
      lines: ["ACL cache drain started"],
    });
    const id = uid("acl");
    await connect(node(), 4, { clientId: id });
    expect(await ctl(node(), "acl", "cache-clean", id)).toMatchObject({ code: 0, lines: ["ok"] });
    expect(await ctl(node(), "acl", "cache-clean", "nobody")).toMatchObject({ code: 1, stderr: "Not Found.\n" });
  });
});

describe("svc_ctl: admins, mgmt, clientid, user", () => {
  it("admins add|passwd|del", async () => {
    expect(await ctl(node(), "admins", "add", "ops", "pw1", "viewer")).toMatchObject({ code: 0, lines: ["ok"] });
    const dup = await ctl(node(), "admins", "add", "ops", "pw1");
    expect(dup.code).toBe(1);
    expect(dup.stderr).toContain("user already exists");
    expect(await node().services.users.verify("ops", "pw1")).toBe(true);
    expect(await ctl(node(), "admins", "passwd", "ops", "pw2")).toMatchObject({ code: 0, lines: ["ok"] });
    expect(await node().services.users.verify("ops", "pw2")).toBe(true);
    expect(await ctl(node(), "admins", "del", "ops")).toMatchObject({ code: 0, lines: ["ok"] });
    expect(await ctl(node(), "admins", "del", "ops")).toMatchObject({ code: 1, stderr: "Not Found.\n" });
    expect((await ctl(node(), "admins", "passwd", "ghost", "x")).code).toBe(1);
  });

  it("mgmt insert|list|lookup|update|delete", async () => {
    const ins = await ctl(node(), "mgmt", "insert", "ops_app", "Ops");
    expect(ins.code).toBe(0);
    const secret = /^AppSecret: (\S+)$/.exec(ins.lines[0])?.[1];
    expect(secret).toBeDefined();
    const line = "app_id: ops_app, secret: ******, name: Ops, desc: , status: true, expired: undefined";
    expect((await ctl(node(), "mgmt", "list")).lines).toContain(line);
    expect((await ctl(node(), "mgmt", "lookup", "ops_app")).lines).toEqual([line]);
    // The new application authenticates svc_ctl itself.
    const as = await ctl(node(), "status", "--user", "ops_app", "--password", secret as string);
    expect(as.code).toBe(0);
    expect(await ctl(node(), "mgmt", "update", "ops_app", "false")).toMatchObject({
      code: 0,
      lines: ["update successfully."],
    });
    expect((await ctl(node(), "mgmt", "lookup", "ops_app")).lines[0]).toContain("status: false");
    expect((await ctl(node(), "mgmt", "update", "ops_app", "maybe")).code).toBe(2);
    expect(await ctl(node(), "mgmt", "delete", "ops_app")).toMatchObject({ code: 0, lines: ["ok"] });
    expect(await ctl(node(), "mgmt", "lookup", "ops_app")).toMatchObject({ code: 1, stderr: "Not Found.\n" });
  });

  it.each([
    ["clientid", "cid-1"],
    ["user", "name-1"],
  ])("%s list|add|update|del", async (group, id) => {
    expect(await ctl(node(), group, "add", id, "p1")).toMatchObject({ code: 0, lines: ["ok"] });
    expect((await ctl(node(), group, "list")).lines).toContain(id);
    expect(await ctl(node(), group, "update", id, "p2")).toMatchObject({ code: 0, lines: ["ok"] });
    expect(await ctl(node(), group, "del", id)).toMatchObject({ code: 0, lines: ["ok"] });
    expect((await ctl(node(), group, "list")).lines).not.toContain(id);
    expect(await ctl(node(), group, "update", id, "p3")).toMatchObject({ code: 1, stderr: "Not Found.\n" });
  });
});

describe("svc_ctl: retainer, data, log, trace", () => {
  it("retainer info|topics|clean [<Topic>]", async () => {
    const c = await connect(node(), 4);
    await c.c.publishAsync("ret/a", "1", { retain: true, qos: 1 });
    await c.c.publishAsync("ret/b", "2", { retain: true, qos: 1 });
    await c.c.publishAsync("other/c", "3", { retain: true, qos: 1 });
    const info = await ctl(node(), "retainer", "info");
    expect(info.lines[0]).toMatch(/^retained\/total: \d+$/);
    const topics = await ctl(node(), "retainer", "topics");
    expect(topics.lines).toEqual(expect.arrayContaining(["ret/a", "ret/b", "other/c"]));
    expect((await ctl(node(), "retainer", "clean", "ret/#")).lines).toEqual(["Cleaned 2 retained messages"]);
    expect((await ctl(node(), "retainer", "topics")).lines).not.toContain("ret/a");
    expect((await ctl(node(), "retainer", "clean", "bad/#/x")).code).toBe(1);
    const all = await ctl(node(), "retainer", "clean");
    expect(all.lines[0]).toMatch(/^Cleaned \d+ retained messages$/);
    expect((await ctl(node(), "retainer", "info", "--json")).stdout).toContain('"retained": 0');
  });

  it("data export|import", async () => {
    const exp = await ctl(node(), "data", "export");
    expect(exp.code).toBe(0);
    expect(exp.lines[0]).toMatch(new RegExp(`^The data has been successfully exported to \\S+\\.json on ${NAME}\\.$`));
    const filename = /exported to (\S+) on/.exec(exp.lines[0])?.[1] as string;
    expect(await ctl(node(), "data", "import", filename)).toMatchObject({
      code: 0,
      lines: ["The data has been imported successfully."],
    });
    // A local file is sent as the document itself.
    const doc = readFileSync(join(node().dataDir, "backup", filename), "utf8");
    const local = join(tmp.dir(), "doc.json");
    writeFileSync(local, doc);
    expect((await ctl(node(), "data", "import", local)).code).toBe(0);
    const missing = await ctl(node(), "data", "import", "no-such-backup.json");
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim().split("\n")).toHaveLength(1);
  });

  it("log primary-level [<Level>]", async () => {
    const before = (await ctl(node(), "log", "primary-level")).lines[0];
    // "error", not a chattier level: the test node's logger stays quiet.
    const set = await ctl(node(), "log", "primary-level", "error");
    expect(set.stderr).toBe("");
    expect(set).toMatchObject({ code: 0, lines: ["error"] });
    expect(node().services.log.getLogLevel()).toBe("error");
    const bad = await ctl(node(), "log", "primary-level", "loud");
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("level must be one of");
    await ctl(node(), "log", "primary-level", before);
    expect(node().services.log.getLogLevel()).toBe(before);
  });

  it("trace start|list|stop for a client and a topic", async () => {
    const dir = tmp.dir();
    const cf = join(dir, "client.log");
    const tf = join(dir, "topic.log");
    expect((await ctl(node(), "trace", "start", "client", "tc1", cf)).lines).toEqual(["trace client tc1 successfully"]);
    expect((await ctl(node(), "trace", "start", "topic", "t/#", tf, "info")).lines).toEqual([
      "trace topic t/# successfully",
    ]);
    const dup = await ctl(node(), "trace", "start", "client", "tc1", cf);
    expect(dup.code).toBe(1);
    expect(dup.stderr).toMatch(/^trace client tc1 failed: /);
    expect((await ctl(node(), "trace", "list")).lines).toEqual([
      `Trace(clientid=tc1, level=debug, destination="${cf}")`,
      `Trace(topic=t/#, level=info, destination="${tf}")`,
    ]);
    expect((await ctl(node(), "trace", "stop", "client", "tc1")).lines).toEqual([
      "stop tracing client tc1 successfully",
    ]);
    expect((await ctl(node(), "trace", "stop", "topic", "t/#")).lines).toEqual(["stop tracing topic t/# successfully"]);
    expect(await ctl(node(), "trace", "stop", "topic", "t/#")).toMatchObject({
      code: 1,
      stderr: "stop tracing topic t/# failed: not_found\n",
    });
    expect((await ctl(node(), "trace", "start", "ip", "x", cf)).code).toBe(2);
  });
});
