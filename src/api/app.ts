// The management API as one Hono application: `/status`, `/api/v2` (legacy, dashboard-user
// auth), `/api/v3` and `/api/v4` (the same handlers, application auth). Errors are rendered here
// and only here: ApiErrors as `{code, message}` (or `{message}` for a 5xx) with their status,
// a node-scoped view whose node did not answer (NodeCallError) as 500 `{message: "badrpc"}`,
// anything unexpected as a logged 500 `{message: "internal_error"}`.

import type { Context } from "hono";
import { Hono } from "hono";
import { NodeCallError } from "../services/cluster-calls.ts";
import type { ApiDeps } from "./deps.ts";
import { badRpc, CODE } from "./errors.ts";
import { prometheusRoute } from "./prometheus.ts";
import type { CatalogueEntry } from "./route-table.ts";
import { statusRoute } from "./status.ts";
import { tracingMiddleware } from "./tracing.ts";
import { buildV2 } from "./v2/index.ts";
import { buildV3 } from "./v3/index.ts";
import { jsonBody, limitBody, toApiError } from "./validation.ts";

export interface ManagementApi {
  app: Hono;
  /** Endpoints per version prefix, from the route tables. */
  catalogue: Record<"v2" | "v3" | "v4", readonly CatalogueEntry[]>;
}

export function createApi(d: ApiDeps): ManagementApi {
  const onError = (err: unknown, c: Context): Response => {
    if (err instanceof NodeCallError) {
      d.logger.warn({ node: err.node, method: err.method, err: err.message }, "cluster call failed");
      const e = badRpc();
      return c.json(e.body(), e.status);
    }
    const e = toApiError(err);
    if (e !== undefined) return c.json(e.body(), e.status, e.headers);
    d.logger.error({ err }, "management API handler failed");
    return c.json({ message: "internal_error" }, 500);
  };
  const notFound = (c: Context): Response => c.json({ code: CODE.notFound, message: "Not found" }, 404);

  const v2 = buildV2(d);
  const v3 = buildV3(d, d.services.nodes.version);
  for (const sub of [v2.app, v3.app]) {
    sub.onError(onError);
    sub.notFound(notFound);
  }

  const app = new Hono({ strict: false });
  app.onError(onError);
  app.notFound(notFound);
  if (d.tracing != null) app.use("*", tracingMiddleware(d.tracing, d.services.metrics.node));
  statusRoute(app, d);
  prometheusRoute(app, d);
  app.use("/api/*", limitBody, jsonBody);
  app.route("/api/v2", v2.app);
  app.route("/api/v3", v3.app);
  app.route("/api/v4", v3.app);
  return { app, catalogue: { v2: v2.table.catalogue, v3: v3.table.catalogue, v4: v3.table.catalogue } };
}
