// A rule created through the API survives a node restart (same data dir) and still fires.

import { afterEach, expect, it } from "vitest";
import { req } from "../api/helpers.ts";
import { cleanup, connect } from "../conformance/helpers.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";

let node: TestNode | undefined;
afterEach(async () => {
  await cleanup();
  await node?.close();
});

it("keeps rules across a restart", async () => {
  node = await startTestNode();
  const made = await req(node, "POST", "/api/v4/rules", {
    body: {
      rawsql: `SELECT payload FROM "keep/#"`,
      actions: [{ name: "republish", params: { target_topic: "kept/out" } }],
    },
  });
  expect(made.status, made.text).toBe(200);
  const dataDir = node.dataDir;
  await node.close(true);
  node = await startTestNode({ dataDir });
  const got = await req(node, "GET", `/api/v4/rules/${made.body.data.id}`);
  expect(got.body.data).toMatchObject({ id: made.body.data.id, rawsql: `SELECT payload FROM "keep/#"`, enabled: true });
  const sub = await connect(node, 4);
  await sub.c.subscribeAsync("kept/out", { qos: 1 });
  const pub = await connect(node, 4);
  await pub.c.publishAsync("keep/1", "still here", { qos: 1 });
  expect((await sub.inbox.next()).payload).toBe("still here");
});
