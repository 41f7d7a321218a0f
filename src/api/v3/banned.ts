// `/banned` (spec 000 §4 "Ban records", emqx-facts §3.3): the bans in force (paginated), create one
// (`who` and `as` required, 107 when absent; `as` other than clientid, username or peerhost is 108;
// defaults `by` "user", `at` now, `until` now + 300 s; the answer echoes the body), delete one by
// `as` and `who`, and the catalogue's 3.x form `DELETE /banned/{who}` (every kind of ban on `who`,
// or only `?as=`'s). Deleting what is not banned answers 404.

import { z } from "@hono/zod-openapi";
import { pageOf } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok, paged } from "../envelope.ts";
import { badParam, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Ban, Done, envelope, pagedEnvelope, pageQuery } from "../schemas.ts";

const pathParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path" }, description });

const AsWhoParam = z.object({
  as: pathParam("as", "clientid, username or peerhost"),
  who: pathParam("who", "The banned client id, user name or IP address"),
});
const WhoParam = z.object({ who: pathParam("who", "The banned client id, user name or IP address") });
const AsQuery = z.object({
  as: z.string().optional().openapi({ description: "Only the ban of this kind (clientid, username, peerhost)" }),
});
const seconds = (description: string) =>
  z
    .number()
    .int()
    .min(0)
    .optional()
    .openapi({ description: `${description} (seconds since the epoch)` });
const NewBan = z
  .object({
    who: z.string().min(1).openapi({ description: "Client id, user name or IP address" }),
    as: z.string().openapi({ description: "clientid, username or peerhost" }),
    by: z.string().optional().openapi({ description: 'Who banned (default "user")' }),
    reason: z.string().optional(),
    at: seconds("When the ban was made (default now)"),
    until: seconds("When the ban ends (default now + 300 s)"),
  })
  .openapi("NewBan");

const badAs = () => badParam("Value as must be clientid, username or peerhost");

export function bannedRoutes(t: RouteTable, d: ApiDeps): void {
  const banned = d.services.banned;
  const tag = "banned";

  t.add(
    {
      name: "list_banned",
      method: "get",
      path: "/banned",
      descr: "List banned clients",
      tag,
      query: pageQuery(d.maxRowLimit),
      response: pagedEnvelope(Ban),
    },
    ({ query }) => paged(banned.list(), pageOf(d, query)),
  );

  t.add(
    {
      name: "create_banned",
      method: "post",
      path: "/banned",
      descr: "Ban a client id, user name or IP address",
      tag,
      body: NewBan,
      response: envelope(NewBan),
    },
    async ({ body }) => {
      const out = await banned.create(body);
      if ("error" in out) throw out.error === "bad_as" ? badAs() : badParam(`not an IP address: ${body.who}`);
      return ok(body);
    },
  );

  t.add(
    {
      name: "delete_banned",
      method: "delete",
      path: "/banned/{as}/{who}",
      descr: "Lift the ban of a client id, user name or IP address",
      tag,
      params: AsWhoParam,
      response: Done,
    },
    async ({ params }) => {
      const out = await banned.delete(params.as, params.who);
      if (out === "bad_as") throw badAs();
      if (!out) throw notFound(`ban of ${params.as} ${params.who}`);
      return ok();
    },
  );

  t.add(
    {
      name: "delete_banned_who",
      method: "delete",
      path: "/banned/{who}",
      descr: "Lift the bans of a client id, user name or IP address (every kind, or ?as=)",
      tag,
      params: WhoParam,
      query: AsQuery,
      response: Done,
    },
    async ({ params, query }) => {
      const out = await banned.deleteWho(params.who, query.as);
      if (out === "bad_as") throw badAs();
      if (out === 0) throw notFound(`ban of ${params.who}`);
      return ok();
    },
  );
}
