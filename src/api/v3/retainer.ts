// svc's own `/retainer` routes (the CLI's `retainer info|topics|clean [<topic>]`): the retained
// messages held by the node that answers, their topics, and removing all of them or those
// matching `?topic=<filter>`.

import { z } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { badParam } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope } from "../schemas.ts";

export function retainerRoutes(t: RouteTable, d: ApiDeps): void {
  const retainer = d.services.retainer;
  const tag = "retainer";

  t.add(
    {
      name: "retainer_info",
      method: "get",
      path: "/retainer",
      descr: "Number of retained messages on the node (svc)",
      tag,
      response: envelope(z.object({ retained: z.number().int() })),
    },
    () => ok(retainer.info()),
  );

  t.add(
    {
      name: "retainer_topics",
      method: "get",
      path: "/retainer/topics",
      descr: "Topics of the retained messages on the node (svc)",
      tag,
      response: envelope(z.array(z.string())),
    },
    () => ok(retainer.topics()),
  );

  t.add(
    {
      name: "retainer_clean",
      method: "delete",
      path: "/retainer",
      descr: "Remove every retained message, or those matching ?topic=<filter> (svc)",
      tag,
      query: z.object({ topic: z.string().min(1).optional().openapi({ description: "Topic filter" }) }),
      response: envelope(z.object({ cleaned: z.number().int() })),
    },
    ({ query }) => {
      const out = retainer.clean(query.topic);
      if (!out.ok) throw badParam(out.message);
      return ok({ cleaned: out.cleaned });
    },
  );
}
