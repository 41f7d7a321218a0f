// Rule events fed by the broker's per-delivery and ACL hookpoints: `$events/delivery_dropped`
// (a message not delivered to one subscriber: here No Local) and
// `$events/client_check_acl_complete` (the ACL's decision, first computed, then from its cache).
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the strings are templates with ${var} placeholders

import { describe, expect, it } from "vitest";
import { connect, req, uid, useNode } from "../api/helpers.ts";

const node = useNode();

async function createRule(body: unknown): Promise<void> {
  const r = await req(node(), "POST", "/api/v4/rules", { body });
  expect(r.status, r.text).toBe(200);
}

describe("event rules", () => {
  it("fires $events/delivery_dropped with the drop reason", async () => {
    const tag = uid("dd");
    await createRule({
      rawsql: `SELECT reason, clientid, from_clientid FROM "$events/delivery_dropped" WHERE topic = 'dd/${tag}'`,
      actions: [
        {
          name: "republish",
          params: { target_topic: "dd-out/${clientid}", payload_tmpl: "${reason} from ${from_clientid}" },
        },
      ],
    });
    const watcher = await connect(node(), 5);
    await watcher.c.subscribeAsync("dd-out/#", { qos: 1 });
    // A 5.0 client subscribed with No Local publishes to its own topic: its own copy is dropped.
    const self = await connect(node(), 5);
    await self.c.subscribeAsync(`dd/${tag}`, { qos: 1, nl: true });
    await self.c.publishAsync(`dd/${tag}`, "x", { qos: 1 });
    const m = await watcher.inbox.next();
    expect(m.topic).toBe(`dd-out/${self.id}`);
    expect(m.payload).toBe(`no_local from ${self.id}`);
  });

  it("fires $events/client_check_acl_complete with the decision and whether it came from the cache", async () => {
    const tag = uid("acl");
    await createRule({
      rawsql: `SELECT action, result, is_cache FROM "$events/client_check_acl_complete" WHERE topic = 'acl/${tag}'`,
      actions: [
        {
          name: "republish",
          params: { target_topic: `acl-out/${tag}`, payload_tmpl: "${action} ${result} ${is_cache}" },
        },
      ],
    });
    const watcher = await connect(node(), 5);
    await watcher.c.subscribeAsync(`acl-out/${tag}`, { qos: 1 });
    const pub = await connect(node(), 4);
    await pub.c.publishAsync(`acl/${tag}`, "1", { qos: 1 });
    await pub.c.publishAsync(`acl/${tag}`, "2", { qos: 1 });
    const got = await watcher.inbox.take(2);
    expect(got.map((m) => m.payload)).toEqual(["publish allow false", "publish allow true"]);
  });
});
