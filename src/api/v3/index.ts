// The v3 API (served under both /api/v3 and /api/v4): HTTP Basic with an application's
// AppID/AppSecret, then the route modules. `/openapi.json` (the OpenAPI document of these same
// routes) is served before authentication.

import { OpenAPIHono } from "@hono/zod-openapi";
import { basicAuth } from "../auth.ts";
import type { ApiDeps } from "../deps.ts";
import { RouteTable } from "../route-table.ts";
import { validationHook } from "../validation.ts";
import { aclRoutes } from "./acl.ts";
import { alarmRoutes } from "./alarms.ts";
import { appRoutes } from "./apps.ts";
import { authEntryRoutes } from "./auth-entries.ts";
import { bannedRoutes } from "./banned.ts";
import { bridgeRoutes } from "./bridges.ts";
import { catalogueRoute } from "./catalogue.ts";
import { clientRoutes } from "./clients.ts";
import { clusterRoutes } from "./cluster.ts";
import { dataRoutes } from "./data.ts";
import { listenerRoutes } from "./listeners.ts";
import { metricRoutes } from "./metrics.ts";
import { mqttRoutes } from "./mqtt.ts";
import { nodeRoutes } from "./nodes.ts";
import { observabilityRoutes } from "./observability.ts";
import { pluginRoutes } from "./plugins.ts";
import { retainerRoutes } from "./retainer.ts";
import { ruleRoutes } from "./rules.ts";
import { subscriptionRoutes } from "./subscriptions.ts";
import { userRoutes } from "./users.ts";

export const OPENAPI_PATH = "/openapi.json";

export function buildV3(d: ApiDeps, version: string): { app: OpenAPIHono; table: RouteTable } {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook as never });
  const t = new RouteTable(app);
  app.openAPIRegistry.registerComponent("securitySchemes", "appBasic", {
    type: "http",
    scheme: "basic",
    description: "AppID and AppSecret of an application (`/apps`)",
  });
  t.addPlain({ name: "openapi", path: OPENAPI_PATH, descr: "The OpenAPI document of this API" }, (c) =>
    c.json(
      app.getOpenAPIDocument({
        openapi: "3.0.3",
        info: { title: "svc management API", version },
        servers: [{ url: "/api/v4" }, { url: "/api/v3" }],
        security: [{ appBasic: [] }],
      }),
    ),
  );
  app.use(
    "*",
    basicAuth(
      (id, secret) => d.services.apps.verify(id, secret),
      (err) => d.logger.error({ err }, "application store failed during authentication"),
    ),
  );
  catalogueRoute(t);
  nodeRoutes(t, d);
  clientRoutes(t, d);
  subscriptionRoutes(t, d);
  mqttRoutes(t, d);
  pluginRoutes(t, d);
  listenerRoutes(t, d);
  metricRoutes(t, d);
  alarmRoutes(t, d);
  appRoutes(t, d);
  userRoutes(t, d);
  bannedRoutes(t, d);
  authEntryRoutes(t, d);
  dataRoutes(t, d);
  ruleRoutes(t, d);
  clusterRoutes(t, d);
  aclRoutes(t, d);
  retainerRoutes(t, d);
  observabilityRoutes(t, d);
  bridgeRoutes(t, d);
  return { app, table: t };
}
