// `/auth_clientid` and `/auth_username` (spec 000 §4 catalogue, emqx-facts §3.3): the credentials of
// svc_auth_clientid and svc_auth_username. List `{clientid|username, created_at}` (paginated), add
// one `{clientid|username, password[, is_superuser]}` (409 code 113 when it exists) or an array of
// them (`data` maps each id to "ok" or "existed"), look one up (passwords are never shown), change
// a password, delete. An unknown id answers 404. The entries are kept whether or not the plugin is
// loaded.

import { z } from "@hono/zod-openapi";
import type { AuthEntryRecord, AuthEntryService } from "../../services/auth-entries.ts";
import { pageOf } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok, paged } from "../envelope.ts";
import { ApiError, CODE, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope, pagedEnvelope, pageQuery } from "../schemas.ts";

interface Kind {
  /** `clientid` / `username`: the id field, path parameter and name suffix. */
  field: "clientid" | "username";
  path: string;
  what: string;
  service: AuthEntryService;
}

function entryRoutes(t: RouteTable, d: ApiDeps, k: Kind): void {
  const { field, path, what, service } = k;
  const tag = path.slice(1);
  const id = z.string().min(1).openapi({ description: what });
  const password = z.string().min(1);
  const superuser = z.boolean().optional().openapi({ description: "Skips ACL checks (default false)" });
  const New = z.object({ [field]: id, password, is_superuser: superuser }).openapi(`New_${tag}`);
  const Update = z.object({ password, is_superuser: superuser }).openapi(`Update_${tag}`);
  const Item = z.object({ [field]: z.string(), created_at: z.number().int() }).openapi(`${tag}_item`);
  const One = z
    .object({ [field]: z.string(), is_superuser: z.boolean(), created_at: z.number().int() })
    .openapi(`${tag}_entry`);
  const Param = z.object({
    [field]: z
      .string()
      .min(1)
      .openapi({ param: { name: field, in: "path" }, description: what }),
  });
  const item = (r: AuthEntryRecord) => ({ [field]: r.id, created_at: r.created_at });
  const idOf = (o: Record<string, unknown>) => o[field] as string;

  t.add(
    {
      name: `list_${field}`,
      method: "get",
      path,
      descr: `List ${what}s with credentials`,
      tag,
      query: pageQuery(d.maxRowLimit),
      response: pagedEnvelope(Item),
    },
    async ({ query }) => paged((await service.list()).map(item), pageOf(d, query)),
  );

  t.add(
    {
      name: `add_${field}`,
      method: "post",
      path,
      descr: `Add a ${what} and password (or an array of them)`,
      tag,
      body: z.union([New, z.array(New).min(1)]),
      response: z.union([Done, envelope(z.record(z.string(), z.enum(["ok", "existed"])))]),
    },
    async ({ body }) => {
      const list = (Array.isArray(body) ? body : [body]) as Record<string, unknown>[];
      const entries = list.map((e) => ({
        id: idOf(e),
        password: e.password as string,
        is_superuser: e.is_superuser as boolean | undefined,
      }));
      if (Array.isArray(body)) return ok(await service.addMany(entries));
      if ((await service.add(entries[0])) === "exists")
        throw new ApiError(409, CODE.userExists, `${what} already exists: ${entries[0].id}`);
      return ok();
    },
  );

  t.add(
    {
      name: `lookup_${field}`,
      method: "get",
      path: `${path}/{${field}}`,
      descr: `Lookup a ${what}`,
      tag,
      params: Param,
      response: envelope(One),
    },
    async ({ params }) => {
      const v = idOf(params);
      const r = await service.get(v);
      if (r === undefined) throw notFound(`${what} ${v}`);
      return ok({ [field]: r.id, is_superuser: r.is_superuser, created_at: r.created_at });
    },
  );

  t.add(
    {
      name: `update_${field}`,
      method: "put",
      path: `${path}/{${field}}`,
      descr: `Change the password of a ${what}`,
      tag,
      params: Param,
      body: Update,
      response: Done,
    },
    async ({ params, body }) => {
      const v = idOf(params);
      if ((await service.update(v, body.password, body.is_superuser)) === "not_found") throw notFound(`${what} ${v}`);
      return ok();
    },
  );

  t.add(
    {
      name: `delete_${field}`,
      method: "delete",
      path: `${path}/{${field}}`,
      descr: `Delete a ${what}`,
      tag,
      params: Param,
      response: Done,
    },
    async ({ params }) => {
      const v = idOf(params);
      if (!(await service.remove(v))) throw notFound(`${what} ${v}`);
      return ok();
    },
  );
}

export function authEntryRoutes(t: RouteTable, d: ApiDeps): void {
  entryRoutes(t, d, {
    field: "clientid",
    path: "/auth_clientid",
    what: "client id",
    service: d.services.authClientid,
  });
  entryRoutes(t, d, {
    field: "username",
    path: "/auth_username",
    what: "user name",
    service: d.services.authUsername,
  });
}
