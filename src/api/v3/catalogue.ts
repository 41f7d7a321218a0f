// `GET /` of v3/v4 (spec 000 §4 "Catalogue"): `{name, method, path, descr}` of every endpoint the
// version serves, read from the route table at request time (so it lists itself and every route
// registered after it).

import { z } from "@hono/zod-openapi";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { CatalogueEntry, envelope } from "../schemas.ts";

export function catalogueRoute(t: RouteTable): void {
  t.add(
    {
      name: "list_endpoints",
      method: "get",
      path: "/",
      descr: "List all endpoints of the API",
      tag: "catalogue",
      response: envelope(z.array(CatalogueEntry)),
    },
    () => ok(t.catalogue.map((e) => ({ ...e }))),
  );
}
