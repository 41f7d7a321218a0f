// Message tracing and the log level through the service layer: a client trace's file holds that
// client's packets in both directions with timestamps and nobody else's; a trace started while
// the client is connected picks up from there; a topic trace holds the messages published to
// matching topics only; list and stop; errors; the log level changes at run time.

import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { connect, uid, useNode, waitUntil } from "../conformance/helpers.ts";

const dir = mkdtempSync(join(tmpdir(), "svc-trace-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[(debug|info)\] /;

describe("message tracing", () => {
  const node = useNode();

  it("writes every packet of the traced client, in and out, and nothing of anyone else", async () => {
    const n = node();
    const file = join(dir, "client.log");
    const id = uid("traced");
    expect(n.services.trace.startClient(id, file, "debug")).toEqual({ ok: true });
    expect(n.services.trace.list()).toEqual([
      { type: "client", name: id, file, level: "debug", started_at: expect.stringMatching(/^\d{4}-/) },
    ]);

    const c = await connect(n, 5, { clientId: id, keepalive: 45 });
    const other = await connect(n, 5, { clientId: uid("other") });
    await c.c.subscribeAsync("tr/a", { qos: 1 });
    await other.c.subscribeAsync("tr/b", { qos: 0 });
    await other.c.publishAsync("tr/a", "hello", { qos: 1 });
    await c.inbox.next();
    await c.c.publishAsync("tr/b", "from-traced", { qos: 0 });
    await other.inbox.next();
    await other.c.publishAsync("tr/b", "not-for-traced", { qos: 1 });
    await other.inbox.next();
    await c.c.endAsync();
    await waitUntil(() => n.broker.sessions.channel(id) === undefined, "traced client gone");
    expect(await n.services.trace.stopClient(id)).toEqual({ ok: true });
    expect(n.services.trace.list()).toEqual([]);

    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    for (const l of lines) expect(l).toMatch(LINE);
    const who = `${id}@127.0.0.1:`;
    expect(lines.every((l) => l.includes(` ${who}`))).toBe(true);
    const events = lines.map((l) => l.replace(LINE, "").replace(/^\S+ /, ""));
    const kinds = events.map((e) => e.replace(/\(.*$/, ""));
    expect(kinds).toEqual([
      "RECV CONNECT",
      "SEND CONNACK",
      "client connected",
      "RECV SUBSCRIBE",
      "SEND SUBACK",
      "SEND PUBLISH",
      "RECV PUBACK",
      "RECV PUBLISH",
      "RECV DISCONNECT",
      "client disconnected: normal",
    ]);
    expect(events[0]).toContain(`clientId=${id}`);
    expect(events[0]).toContain("keepalive=45");
    expect(events[0]).toContain("protocolVersion=5");
    expect(events[5]).toMatch(/topic=tr\/a.*payload="hello"/);
    expect(events[7]).toMatch(/topic=tr\/b.*payload="from-traced"/);
    const text = lines.join("\n");
    expect(text).not.toContain(other.id);
    expect(text).not.toContain("not-for-traced");
  });

  it("starts on a connected client and stops cleanly", async () => {
    const n = node();
    const file = join(dir, "live.log");
    const c = await connect(n, 4);
    expect(n.services.trace.startClient(c.id, file, "debug")).toEqual({ ok: true });
    expect(n.broker.sessions.channel(c.id)?.conn.tracer).not.toBeNull();
    await c.c.subscribeAsync("live/x", { qos: 0 });
    expect(await n.services.trace.stopClient(c.id)).toEqual({ ok: true });
    expect(n.broker.sessions.channel(c.id)?.conn.tracer).toBeNull();
    await c.c.publishAsync("live/x", "after-stop", { qos: 1 });
    await c.inbox.next();
    const kinds = readFileSync(file, "utf8")
      .trimEnd()
      .split("\n")
      .map((l) => l.replace(LINE, "").replace(/^\S+ /, "").replace(/\(.*$/, ""));
    expect(kinds).toEqual(["RECV SUBSCRIBE", "SEND SUBACK"]);
  });

  it("writes the messages published to topics matching a topic trace", async () => {
    const n = node();
    const file = join(dir, "topic.log");
    expect(n.services.trace.startTopic("tt/#", file, "info")).toEqual({ ok: true });
    const c = await connect(n, 5, { clientId: uid("tp") });
    await c.c.publishAsync("tt/a", "one", { qos: 1 });
    await c.c.publishAsync("zz/b", "two", { qos: 1 });
    n.services.publish.publish({ topic: "tt/b/c", payload: "three", qos: 0 });
    expect(await n.services.trace.stopTopic("tt/#")).toEqual({ ok: true });
    await c.c.publishAsync("tt/a", "four", { qos: 1 });
    const lines = readFileSync(file, "utf8").trimEnd().split("\n");
    for (const l of lines) expect(l).toMatch(LINE);
    expect(lines.map((l) => l.replace(LINE, ""))).toEqual([
      `${c.id}@127.0.0.1 PUBLISH to tt/a: qos=1, retain=false, payload="one"`,
      `node PUBLISH to tt/b/c: qos=0, retain=false, payload="three"`,
    ]);
  });

  it("answers errors as outcomes", async () => {
    const n = node();
    const file = join(dir, "err.log");
    expect(n.services.trace.startClient("x", file, "loud")).toMatchObject({ ok: false, error: "bad_level" });
    expect(n.services.trace.startTopic("a/#/b", file, "debug")).toMatchObject({ ok: false, error: "bad_filter" });
    expect(n.services.trace.startTopic("$share/g/a", file, "debug")).toMatchObject({ ok: false, error: "bad_filter" });
    expect(n.services.trace.startClient("x", dir, "debug")).toMatchObject({ ok: false, error: "bad_file" });
    expect(n.services.trace.startClient("x", file, "debug")).toEqual({ ok: true });
    expect(n.services.trace.startClient("x", file, "debug")).toMatchObject({ ok: false, error: "already_traced" });
    expect(await n.services.trace.stopClient("x")).toEqual({ ok: true });
    expect(await n.services.trace.stopClient("x")).toMatchObject({ ok: false, error: "not_found" });
    expect(await n.services.trace.stopTopic("t/#")).toMatchObject({ ok: false, error: "not_found" });
  });
});

describe("log level", () => {
  const node = useNode();

  it("changes at run time through the service layer", () => {
    const n = node();
    const before = n.services.log.getLogLevel();
    expect(n.services.log.setLogLevel("debug")).toEqual({ ok: true, level: "debug" });
    expect(n.services.log.getLogLevel()).toBe("debug");
    expect((n.logger as unknown as { level: string }).level).toBe("debug");
    expect(n.services.log.setLogLevel("warning")).toEqual({ ok: true, level: "warning" });
    expect((n.logger as unknown as { level: string }).level).toBe("warn");
    expect(n.services.log.setLogLevel("verbose")).toMatchObject({ ok: false, error: "bad_level" });
    expect(n.services.log.getLogLevel()).toBe("warning");
    n.services.log.setLogLevel(before);
  });
});
