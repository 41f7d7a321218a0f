// A barrier through the rule engine for the end-to-end rule tests: proving that a rule did NOT
// republish something takes a marker that went through the engine after it.

import { req, uid } from "../api/helpers.ts";
import type { TestNode } from "../helpers/node.ts";

/**
 * A rule on node `n` that republishes what is published to a fresh topic (`topic`) to `target`,
 * payload unchanged. The engine handles the events it is given in order and a republish is
 * synchronous, so a marker published to `topic` reaches a subscriber of `target` after anything
 * a rule made of the messages the same client published before it on the same node.
 * `remove()` deletes the rule.
 */
export async function markerRule(
  n: TestNode,
  target: string,
  qos = 0,
): Promise<{ id: string; topic: string; remove: () => Promise<void> }> {
  const topic = `marker/${uid("m")}`;
  const r = await req(n, "POST", "/api/v4/rules", {
    body: {
      rawsql: `SELECT * FROM "${topic}"`,
      actions: [{ name: "republish", params: { target_topic: target, target_qos: qos } }],
    },
  });
  if (r.body?.code !== 0) throw new Error(`marker rule not created: ${r.text}`);
  const id: string = r.body.data.id;
  return {
    id,
    topic,
    remove: async () => {
      const d = await req(n, "DELETE", `/api/v4/rules/${id}`);
      if (d.body?.code !== 0) throw new Error(`marker rule not deleted: ${d.text}`);
    },
  };
}
