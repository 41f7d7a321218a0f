// `/apps` (spec 000 §5: the applications whose AppID/AppSecret authenticate v3/v4 requests).
// `POST` answers the secret, the only time it is shown; the store keeps its bcrypt hash.

import { z } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, CODE, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { App, Done, envelope } from "../schemas.ts";

const AppIdParam = z.object({
  appid: z
    .string()
    .min(1)
    .openapi({ param: { name: "appid", in: "path" }, description: "AppID" }),
});
const Expired = z.union([z.number().int().min(0), z.literal("undefined")]).openapi({
  description: 'Expiry, seconds since the epoch, or "undefined" (never)',
});
const NewApp = z
  .object({
    app_id: z.string().min(1).max(64),
    name: z.string().optional(),
    secret: z.string().min(1).optional().openapi({ description: "Generated when absent" }),
    desc: z.string().optional(),
    status: z.boolean().optional(),
    expired: Expired.optional(),
  })
  .openapi("NewApp");
const AppUpdate = z
  .object({
    name: z.string().optional(),
    desc: z.string().optional(),
    status: z.boolean().optional(),
    expired: Expired.optional(),
  })
  .openapi("AppUpdate");

export function appRoutes(t: RouteTable, d: ApiDeps): void {
  const apps = d.services.apps;
  const tag = "apps";

  t.add(
    {
      name: "list_apps",
      method: "get",
      path: "/apps",
      descr: "List applications",
      tag,
      response: envelope(z.array(App)),
    },
    async () => ok(await apps.list()),
  );

  t.add(
    {
      name: "add_app",
      method: "post",
      path: "/apps",
      descr: "Add an application",
      tag,
      body: NewApp,
      response: envelope(z.object({ secret: z.string() })),
    },
    async ({ body }) => {
      const out = await apps.create(body);
      if (out === "exists") throw new ApiError(409, CODE.userExists, `application already exists: ${body.app_id}`);
      return ok(out);
    },
  );

  t.add(
    {
      name: "lookup_app",
      method: "get",
      path: "/apps/{appid}",
      descr: "Lookup an application",
      tag,
      params: AppIdParam,
      response: envelope(App),
    },
    async ({ params }) => {
      const app = await apps.get(params.appid);
      if (app === undefined) throw notFound(`application ${params.appid}`);
      return ok(app);
    },
  );

  t.add(
    {
      name: "update_app",
      method: "put",
      path: "/apps/{appid}",
      descr: "Update an application",
      tag,
      params: AppIdParam,
      body: AppUpdate,
      response: Done,
    },
    async ({ params, body }) => {
      if ((await apps.update(params.appid, body)) === "not_found") throw notFound(`application ${params.appid}`);
      return ok();
    },
  );

  t.add(
    {
      name: "del_app",
      method: "delete",
      path: "/apps/{appid}",
      descr: "Delete an application",
      tag,
      params: AppIdParam,
      response: Done,
    },
    async ({ params }) => {
      if (!(await apps.remove(params.appid))) throw notFound(`application ${params.appid}`);
      return ok();
    },
  );
}
