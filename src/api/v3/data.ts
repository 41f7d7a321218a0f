// Data export and import (emqx-facts §3.3): `POST /data/export` writes every cluster-scoped record
// (rules, resources, bans, applications, users, auth and ACL entries; secrets hashed) to a backup
// file `svc-export-Y-M-D-H-M-S.json` and answers `{filename, size, created_at, node}`;
// `GET /data/export` lists the backup files of every running node; `POST /data/import` takes
// `{filename, node?}` or the document itself and answers the records imported per kind;
// `GET|DELETE /data/file/{filename}` download (the file itself) or delete a backup file of this
// node; `POST /data/file` uploads one, `{filename, file}` (`file` the document or its JSON text).
// A file name other than one plain `*.json` name, or a document that is not valid, is 400/108;
// an unknown file 404; uploading over an existing file 409/113.

import { z } from "@hono/zod-openapi";
import { DataError, type DataService } from "../../services/data.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, badParam, CODE, missingParam, nodeNotFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope } from "../schemas.ts";

const BackupFile = z
  .object({
    filename: z.string(),
    size: z.number().int(),
    created_at: z.string().openapi({ description: "YYYY-MM-DD HH:MM:SS" }),
    node: z.string(),
  })
  .openapi("BackupFile");

const records = (description: string) => z.array(z.looseObject({})).optional().openapi({ description });
const DataDocument = z
  .looseObject({
    version: z.string().openapi({ description: 'Format version ("1")' }),
    date: z.string().optional(),
    node: z.string().optional(),
    rules: records("Rule engine rules, as stored (`id`...)"),
    resources: records("Rule engine resources, as stored (`id`...)"),
    blacklist: records("Bans `{who, as, by, reason, at, until}`"),
    apps: records("Applications `{app_id, name, desc, status, expired, secret_hash}`"),
    users: records("Dashboard users `{username, tags, password_hash}`"),
    auth_clientid: records("`{clientid, password, hash, is_superuser, created_at}` (salted hash)"),
    auth_username: records("`{username, password, hash, is_superuser, created_at}` (salted hash)"),
    acl: records("`{as: clientid|username|all, who?, topic, action, access}`"),
  })
  .openapi("DataDocument");

const ImportBody = z
  .looseObject({
    filename: z.string().min(1).optional().openapi({ description: "A backup file (from `GET /data/export`)" }),
    node: z.string().min(1).optional().openapi({ description: "The node holding the file (default this one)" }),
    version: z.string().optional().openapi({ description: "Present when the body is the document itself" }),
  })
  .openapi("DataImport", { description: "`{filename, node?}`, or the document itself (DataDocument)" });

const ImportCounts = z
  .object({
    rules: z.number().int(),
    resources: z.number().int(),
    blacklist: z.number().int(),
    apps: z.number().int(),
    users: z.number().int(),
    auth_clientid: z.number().int(),
    auth_username: z.number().int(),
    acl: z.number().int(),
  })
  .openapi("DataImported");

const Upload = z
  .object({
    filename: z.string().min(1).openapi({ description: "A plain file name ending in .json" }),
    file: z
      .union([z.string(), z.looseObject({})])
      .openapi({ description: "The document (DataDocument), or its JSON text" }),
  })
  .openapi("DataUpload");

const FileParam = z.object({
  filename: z
    .string()
    .min(1)
    .openapi({ param: { name: "filename", in: "path" }, description: "Backup file name (`*.json`)" }),
});

/** The API error of a DataError (others propagate). */
function dataError(err: unknown): never {
  if (!(err instanceof DataError)) throw err;
  switch (err.reason) {
    case "not_found":
      throw new ApiError(404, CODE.notFound, err.message);
    case "unknown_node":
      throw nodeNotFound(err.message.replace(/^node not found: /, ""));
    case "exists":
      throw new ApiError(409, CODE.userExists, err.message);
    default:
      throw badParam(err.message);
  }
}

const guard = <T>(p: Promise<T>): Promise<T> => p.catch(dataError);

export function dataRoutes(t: RouteTable, d: ApiDeps): void {
  const data: DataService = d.services.data;
  const tag = "data";

  t.add(
    {
      name: "export",
      method: "post",
      path: "/data/export",
      descr: "Export rules, resources, bans, applications, users and auth data to a backup file",
      tag,
      response: envelope(BackupFile),
    },
    async () => ok(await data.export()),
  );

  t.add(
    {
      name: "get_list_exported",
      method: "get",
      path: "/data/export",
      descr: "List the backup files of every node",
      tag,
      response: envelope(z.array(BackupFile)),
    },
    async () => ok(await data.list()),
  );

  t.add(
    {
      name: "import",
      method: "post",
      path: "/data/import",
      descr: "Import a backup file ({filename, node?}) or a backup document",
      tag,
      body: ImportBody,
      response: envelope(ImportCounts),
    },
    async ({ body }) => {
      if (body.version !== undefined) return ok(await guard(data.import(body)));
      if (body.filename === undefined) throw missingParam("filename");
      return ok(await guard(data.importFile(body.filename, body.node)));
    },
  );

  t.add(
    {
      name: "download",
      method: "get",
      path: "/data/file/{filename}",
      descr: "Download a backup file of this node",
      tag,
      params: FileParam,
      response: DataDocument,
    },
    async ({ params }) => {
      const text = await guard(data.readLocal(params.filename));
      return new Response(text, {
        headers: {
          "content-type": "application/json",
          "content-disposition": `attachment; filename="${params.filename}"`,
        },
      });
    },
  );

  t.add(
    {
      name: "delete_backup_file",
      method: "delete",
      path: "/data/file/{filename}",
      descr: "Delete a backup file of this node",
      tag,
      params: FileParam,
      response: Done,
    },
    async ({ params }) => {
      await guard(data.remove(params.filename));
      return ok();
    },
  );

  t.add(
    {
      name: "upload",
      method: "post",
      path: "/data/file",
      descr: "Upload a backup file ({filename, file})",
      tag,
      body: Upload,
      response: envelope(BackupFile),
    },
    async ({ body }) => ok(await guard(data.upload(body.filename, body.file))),
  );
}
