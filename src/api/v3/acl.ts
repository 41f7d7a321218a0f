// svc's own `DELETE /acl_cache` (the CLI's `acl cache-clean all`): empties the ACL cache of every
// client on the node that answers. One client's cache is `/clients/{clientid}/acl_cache`.

import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import type { RouteTable } from "../route-table.ts";
import { Done } from "../schemas.ts";

export function aclRoutes(t: RouteTable, d: ApiDeps): void {
  t.add(
    {
      name: "clean_all_acl_cache",
      method: "delete",
      path: "/acl_cache",
      descr: "Clear the ACL cache of every client on the node (svc)",
      tag: "clients",
      response: Done,
    },
    () => {
      d.services.acl.clearAllCaches();
      return ok();
    },
  );
}
