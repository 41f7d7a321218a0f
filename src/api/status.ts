// Probes, without authentication. `GET /status` (readiness): 200 and `Node <name> is started\nsvc
// is running` while the node runs; 503 while it starts or drains (emqx-facts §3.1). `GET /livez`
// (liveness): 200 `ok` whenever the process serves HTTP, starting, running or draining, so a
// draining node is not restarted by its liveness probe.

import type { Hono } from "hono";
import type { ApiDeps } from "./deps.ts";

export function statusRoute(app: Hono, d: ApiDeps): void {
  app.get("/status", (c) => {
    const nodes = d.services.nodes;
    return c.text(nodes.statusText(), nodes.state === "running" ? 200 : 503);
  });
  app.get("/livez", (c) => c.text("ok", 200));
}
