// The legacy v2 API (spec 001): HTTP Basic with a dashboard user, its own envelope
// (`{code, result}`), field names and paging, over the same services as v3.

import { OpenAPIHono } from "@hono/zod-openapi";
import { basicAuth } from "../auth.ts";
import type { ApiDeps } from "../deps.ts";
import { RouteTable } from "../route-table.ts";
import { validationHook } from "../validation.ts";
import { v2ClientRoutes } from "./clients.ts";
import { v2MonitoringRoutes } from "./monitoring.ts";
import { v2MqttRoutes } from "./mqtt.ts";
import { v2NodeRoutes } from "./nodes.ts";
import { v2PluginRoutes } from "./plugins.ts";
import { v2SubscriptionRoutes } from "./subscriptions.ts";

export function buildV2(d: ApiDeps): { app: OpenAPIHono; table: RouteTable } {
  const app = new OpenAPIHono({ strict: false, defaultHook: validationHook as never });
  app.use(
    "*",
    basicAuth(
      (user, password) => d.services.users.verify(user, password),
      (err) => d.logger.error({ err }, "user store failed during authentication"),
    ),
  );
  const t = new RouteTable(app);
  v2NodeRoutes(t, d);
  v2ClientRoutes(t, d);
  v2SubscriptionRoutes(t, d);
  v2MqttRoutes(t, d);
  v2PluginRoutes(t, d);
  v2MonitoringRoutes(t, d);
  return { app, table: t };
}
