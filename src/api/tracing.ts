// A span per management API request (`telemetry.tracing = on`): `<METHOD> <route>` (the route
// pattern, low-cardinality), a server span continuing the caller's W3C `traceparent` header, with
// the HTTP semantic-convention attributes; handlers run with it active (log lines carry its ids).

import type { MiddlewareHandler } from "hono";
import { routePath } from "hono/route";
import type { Tracing } from "../telemetry/tracing.ts";

export function tracingMiddleware(t: Tracing, nodeName: string): MiddlewareHandler {
  return async (c, next) => {
    const method = c.req.method;
    const url = new URL(c.req.url);
    const span = t.start(`${method}`, {
      kind: "server",
      parent: t.carrierOf((k) => c.req.header(k)) ?? null,
      attributes: {
        "http.request.method": method,
        "url.path": url.pathname,
        "url.scheme": url.protocol.replace(":", ""),
        "svc.node": nodeName,
      },
    });
    try {
      await t.with(span, next);
      const route = routePath(c, -1);
      if (route !== "" && route !== "*" && route !== "/*") {
        span.updateName(`${method} ${route}`);
        span.setAttribute("http.route", route);
      }
      span.setAttribute("http.response.status_code", c.res.status);
      if (c.res.status >= 500) t.error(span, `HTTP ${c.res.status}`);
    } catch (err) {
      t.fail(span, err);
      throw err;
    } finally {
      span.end();
    }
  };
}
