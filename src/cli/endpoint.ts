// Where svc_ctl finds the node's management API: `management.listener.http` and
// `management.default_application.id/.secret` from the node's own configuration (`--config`,
// $SVC_CONFIG or etc/svc.conf when present, then SVC_ variables), with --host/--port/--user/
// --password on top. A wildcard bind is reached on 127.0.0.1.

import { existsSync } from "node:fs";
import { loadConfig } from "../config/index.ts";
import type { Endpoint } from "./client.ts";
import { CliError } from "./errors.ts";

export interface EndpointOptions {
  config?: string;
  host?: string;
  port?: number;
  user?: string;
  password?: string;
}

const DEFAULT_FILE = "etc/svc.conf";

export function resolveEndpoint(opts: EndpointOptions, env: NodeJS.ProcessEnv): Endpoint {
  const file = opts.config ?? (env.SVC_CONFIG || (existsSync(DEFAULT_FILE) ? DEFAULT_FILE : undefined));
  const config = loadConfig({ file, env });
  const bind = config.get("management.listener.http");
  if (bind === null && opts.port === undefined)
    throw new CliError("the management HTTP listener is off (management.listener.http = off); give --port");
  const bound = bind?.host ?? "";
  const wildcard = bound === "" || bound === "0.0.0.0" || bound === "::";
  return {
    host: opts.host ?? (wildcard ? "127.0.0.1" : bound),
    port: opts.port ?? (bind?.port as number),
    user: opts.user ?? config.get("management.default_application.id"),
    password: opts.password ?? config.get("management.default_application.secret"),
  };
}
