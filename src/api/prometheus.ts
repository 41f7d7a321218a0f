// `GET /metrics`: this node's metrics, statistics, listener figures and alarm count in the
// Prometheus text format, without authentication (scrapers, the chart's ServiceMonitor), on every
// management API port. The same values as `/api/v4/nodes/<node>/metrics` and `/stats`.

import type { Hono } from "hono";
import { renderPrometheus } from "../services/prometheus.ts";
import type { ApiDeps } from "./deps.ts";

export const PROMETHEUS_PATH = "/metrics";

export function prometheusRoute(app: Hono, d: ApiDeps): void {
  app.get(PROMETHEUS_PATH, (c) => {
    const m = d.services.metrics;
    const text = renderPrometheus({
      node: m.node,
      metrics: m.metrics(),
      stats: m.stats(),
      listeners: d.services.listeners.local(),
      alarmsActive: m.alarmsPresent().length,
    });
    return c.body(text, 200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" });
  });
}
