// The route table: every endpoint is declared once here, with its zod schemas. Declaring it
// registers the Hono handler (validation through @hono/zod-openapi, so the OpenAPI document comes
// from the same schemas) and records the catalogue entry `{name, method, path, descr}` that
// `GET /api/v3/` lists. Nothing else registers API routes, so the catalogue cannot drift.

import { createRoute, type OpenAPIHono, type z } from "@hono/zod-openapi";
import type { Context } from "hono";

export type Method = "get" | "post" | "put" | "delete";

type Out<T> = T extends z.ZodType ? z.output<T> : undefined;

export interface EndpointSpec<P, Q, B> {
  /** Catalogue name, e.g. `list_clients`. */
  name: string;
  method: Method;
  /** Relative to the version base, OpenAPI style: `/clients/{clientid}`. */
  path: string;
  descr: string;
  /** OpenAPI tag (the resource). */
  tag: string;
  params?: P;
  query?: Q;
  body?: B;
  /** Schema of the 200 answer (OpenAPI only; answers are not validated at run time). */
  response: z.ZodType;
}

export interface CatalogueEntry {
  name: string;
  method: string;
  path: string;
  descr: string;
}

export interface RouteInput<P, Q, B> {
  params: Out<P>;
  query: Out<Q>;
  body: Out<B>;
}

/** A handler returns the JSON body of a 200 answer (or a Response); errors are thrown ApiErrors. */
export type RouteHandler<P, Q, B> = (input: RouteInput<P, Q, B>, c: Context) => unknown;

const ERROR_DOC = {
  400: { description: "Bad request: `{code: 107|108|109|115|116, message}`" },
  401: { description: "Missing (104) or wrong (103) credentials" },
  404: { description: "Unknown object or node: `{code, message}`" },
};

export class RouteTable {
  readonly catalogue: CatalogueEntry[] = [];

  constructor(readonly app: OpenAPIHono) {}

  add<
    P extends z.ZodType | undefined = undefined,
    Q extends z.ZodType | undefined = undefined,
    B extends z.ZodType | undefined = undefined,
  >(spec: EndpointSpec<P, Q, B>, handler: RouteHandler<P, Q, B>): void {
    const request: Record<string, unknown> = {};
    if (spec.params !== undefined) request.params = spec.params;
    if (spec.query !== undefined) request.query = spec.query;
    if (spec.body !== undefined)
      request.body = { required: true, content: { "application/json": { schema: spec.body } } };
    const route = createRoute({
      method: spec.method,
      path: spec.path,
      operationId: spec.name,
      summary: spec.descr,
      tags: [spec.tag],
      request,
      responses: {
        200: { description: "Success", content: { "application/json": { schema: spec.response } } },
        ...ERROR_DOC,
      },
    } as Parameters<typeof createRoute>[0]);
    const run = async (c: Context): Promise<Response> => {
      const valid = (c.req.valid as unknown as (target: string) => unknown).bind(c.req);
      const input = {
        params: spec.params === undefined ? undefined : valid("param"),
        query: spec.query === undefined ? undefined : valid("query"),
        body: spec.body === undefined ? undefined : valid("json"),
      } as RouteInput<P, Q, B>;
      const out = await handler(input, c);
      return out instanceof Response ? out : c.json(out as object, 200);
    };
    this.app.openapi(route, run as never);
    this.catalogue.push({ name: spec.name, method: spec.method.toUpperCase(), path: spec.path, descr: spec.descr });
  }

  /** A GET route outside the JSON envelope (the OpenAPI document itself); listed all the same. */
  addPlain(entry: { name: string; path: string; descr: string }, handler: (c: Context) => Response): void {
    this.app.get(entry.path, handler);
    this.catalogue.push({ name: entry.name, method: "GET", path: entry.path, descr: entry.descr });
  }
}
