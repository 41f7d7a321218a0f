// Public surface of the management API: build the Hono application over the services and serve
// it on the management listeners.

import { createApi, type ManagementApi } from "./app.ts";
import type { ApiDeps } from "./deps.ts";
import { type ManagementBind, ManagementServer, type ServerLogger } from "./server.ts";

export type { ManagementApi } from "./app.ts";
export type { ApiDeps, ApiServices } from "./deps.ts";
export type { ManagementBind, ManagementListenerName } from "./server.ts";
export { ManagementServer } from "./server.ts";

export interface RunningApi {
  api: ManagementApi;
  server: ManagementServer;
}

/** Builds the API and binds its listeners (the server's info joins the listener views). */
export async function startManagementApi(
  deps: ApiDeps,
  binds: readonly ManagementBind[],
  logger: ServerLogger,
): Promise<RunningApi> {
  const api = createApi(deps);
  const server = new ManagementServer(api.app, binds, logger);
  deps.services.listeners.addSource(() => server.info());
  await server.start();
  return { api, server };
}
