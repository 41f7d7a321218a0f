// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders
// A rule created through the API on one node of a 2-node cluster (real etcd, test/helpers/etcd.ts)
// runs on the other: a publish on node 2 is republished there by the rule node 1 stored; the
// rule's metrics and a resource's status list every node, asked on either; a later update and
// delete through node 1 reach node 2 too.

import mqtt, { type MqttClient } from "mqtt";
import { afterAll, beforeAll, expect, it } from "vitest";
import { req } from "../api/helpers.ts";
import { clusterMember, describeEtcd, type EtcdServer, findEtcd } from "../helpers/etcd.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil } from "../helpers/wait.ts";
import { markerRule } from "./marker-rule.ts";

const provider = await findEtcd();

const until = (pred: () => boolean | Promise<boolean>, what: string, ms = 8000): Promise<void> =>
  waitUntil(pred, what, ms);

describeEtcd("rules across a 2-node cluster on etcd", provider, (etcdProvider) => {
  let etcd: EtcdServer;
  const nodes: TestNode[] = [];
  const clients: MqttClient[] = [];

  beforeAll(async () => {
    etcd = await etcdProvider.start();
    const prefix = `svcrules${Date.now()}`;
    for (const name of ["r1", "r2"])
      nodes.push(
        await startTestNode({
          set: {
            ...clusterMember(name, etcd, prefix),
          },
        }),
      );
    await until(() => nodes.every((n) => (n.cluster?.runningNodes().length ?? 0) === 2), "membership");
  }, 30_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.endAsync().catch(() => {})));
    for (const n of nodes) await n.close().catch(() => {});
    await etcd?.close();
  }, 30_000);

  const client = async (n: TestNode, clientId: string): Promise<MqttClient> => {
    const c = await mqtt.connectAsync(n.url, { clientId, protocolVersion: 5, reconnectPeriod: 0 });
    clients.push(c);
    return c;
  };

  it("a resource's status lists every node", async () => {
    const [n1, n2] = nodes;
    const made = await req(n1, "POST", "/api/v4/resources", {
      body: { type: "web_hook", config: { url: "http://127.0.0.1:9/unreachable" } },
    });
    expect(made.body.code, made.text).toBe(0);
    const rid: string = made.body.data.id;
    await until(() => n2.rules.resources.isAlive(rid) !== undefined, "resource on node 2");
    const view = (await req(n2, "GET", `/api/v4/resources/${rid}`)).body.data;
    expect(view.status.map((x: { node: string }) => x.node).sort()).toEqual(["r1@127.0.0.1", "r2@127.0.0.1"]);
    expect(view.status.every((x: { is_alive: boolean }) => x.is_alive === false)).toBe(true);
    expect((await req(n1, "DELETE", `/api/v4/resources/${rid}`)).body.code).toBe(0);
  });

  it("a rule created on node 1 fires on node 2; updates and deletion follow", async () => {
    const [n1, n2] = nodes;
    const made = await req(n1, "POST", "/api/v4/rules", {
      body: {
        rawsql: `SELECT payload.v as v FROM "cl/in"`,
        actions: [{ name: "republish", params: { target_topic: "cl/out", target_qos: 1, payload_tmpl: "v=${v}" } }],
      },
    });
    expect(made.body.code, made.text).toBe(0);
    const id: string = made.body.data.id;
    await until(() => n2.rules.loadedRule(id) !== undefined, "rule loaded on node 2");
    expect((await req(n2, "GET", `/api/v4/rules/${id}`)).body.data.rawsql).toBe(`SELECT payload.v as v FROM "cl/in"`);

    const sub = await client(n2, "cl-sub");
    const got: string[] = [];
    sub.on("message", (t, p) => got.push(`${t}:${p.toString()}`));
    await sub.subscribeAsync("cl/out", { qos: 1 });
    const pub = await client(n2, "cl-pub");
    await pub.publishAsync("cl/in", JSON.stringify({ v: 7 }), { qos: 1 });
    await until(() => got.length === 1, "republished on node 2");
    expect(got).toEqual(["cl/out:v=7"]);
    // It ran on node 2 (the node that received the message), not on node 1.
    expect(n2.rules.loadedRule(id)?.metrics.matched).toBe(1);
    expect(n1.rules.loadedRule(id)?.metrics.matched).toBe(0);
    // The API's view, asked on either node, has one metrics entry per node (rule and action).
    for (const n of [n1, n2]) {
      const view = (await req(n, "GET", `/api/v4/rules/${id}`)).body.data;
      const byNode = Object.fromEntries(
        view.metrics.map((m: { node: string; matched: number }) => [m.node, m.matched]),
      );
      expect(byNode).toEqual({ "r1@127.0.0.1": 0, "r2@127.0.0.1": 1 });
      const act = view.actions[0].metrics as { node: string; success: number }[];
      expect(Object.fromEntries(act.map((m) => [m.node, m.success]))).toEqual({ "r1@127.0.0.1": 0, "r2@127.0.0.1": 1 });
      const listed = (await req(n, "GET", "/api/v4/rules")).body.data.find((r: { id: string }) => r.id === id);
      expect(listed.metrics).toHaveLength(2);
    }

    // Disabled through node 1: node 2 stops republishing.
    const off = await req(n1, "PUT", `/api/v4/rules/${id}`, { body: { enabled: false } });
    expect(off.body.code, off.text).toBe(0);
    await until(() => n2.rules.loadedRule(id)?.record.enabled === false, "disabled on node 2");
    await pub.publishAsync("cl/in", JSON.stringify({ v: 8 }), { qos: 1 });
    // Barrier: a marker through node 2's engine after it (a marker rule made through node 1).
    const mark = await markerRule(n1, "cl/out", 1);
    await until(() => n2.rules.loadedRule(mark.id) !== undefined, "marker rule loaded on node 2");
    const marker = "cl/out:marker";
    await pub.publishAsync(mark.topic, "marker", { qos: 1 });
    await until(() => got.includes(marker), "the marker on node 2");
    expect(got.filter((m) => m !== marker)).toHaveLength(1);
    await mark.remove();

    // Deleted through node 1: gone on node 2.
    expect((await req(n1, "DELETE", `/api/v4/rules/${id}`)).body.code).toBe(0);
    await until(() => n2.rules.loadedRule(id) === undefined, "deleted on node 2");
    expect((await req(n2, "GET", `/api/v4/rules/${id}`)).status).toBe(404);
  });
});
