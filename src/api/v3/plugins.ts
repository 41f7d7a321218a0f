// `/plugins` (spec 000 §4 "Plugins", §3 transitions): the cluster form `[{node, plugins}]`, the
// node form, load / unload / reload on a node, and the catalogue's cluster-wide unload / reload.
// Loading a started plugin answers HTTP 500 `{"message": "already_started"}` (spec 000 §7.2);
// unloading or reloading a stopped one answers 500 `{"message": "not_started"}` alike; an
// unknown plugin is a 404.

import { z } from "@hono/zod-openapi";
import type { NodeOutcome, PluginOutcome } from "../../services/plugins.ts";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope, NodeParam, NodePluginParam, Plugin, PluginParam } from "../schemas.ts";

export function pluginError(name: string, outcome: Exclude<PluginOutcome, "ok">): ApiError {
  if (outcome === "not_found") return notFound(`plugin ${name}`);
  return new ApiError(500, 0, outcome);
}

function check(name: string, outcome: PluginOutcome): void {
  if (outcome !== "ok") throw pluginError(name, outcome);
}

function checkAll(name: string, outcomes: NodeOutcome[]): void {
  for (const o of outcomes) check(name, o.outcome);
}

export function pluginRoutes(t: RouteTable, d: ApiDeps): void {
  const plugins = d.services.plugins;
  const tag = "plugins";

  t.add(
    {
      name: "list_all_plugins",
      method: "get",
      path: "/plugins",
      descr: "List all plugins in the cluster",
      tag,
      response: envelope(z.array(z.object({ node: z.string(), plugins: z.array(Plugin) }))),
    },
    async () => ok(await plugins.cluster()),
  );

  t.add(
    {
      name: "list_node_plugins",
      method: "get",
      path: "/nodes/{node}/plugins",
      descr: "List all plugins on a node",
      tag,
      params: NodeParam,
      response: envelope(z.array(Plugin)),
    },
    async ({ params }) => {
      requireNode(d, params.node);
      return ok(await plugins.list(params.node));
    },
  );

  for (const op of ["load", "unload", "reload"] as const) {
    t.add(
      {
        name: `${op}_plugin`,
        method: "put",
        path: `/nodes/{node}/plugins/{plugin}/${op}`,
        descr: `${op[0].toUpperCase()}${op.slice(1)} a plugin on a node`,
        tag,
        params: NodePluginParam,
        response: Done,
      },
      async ({ params }) => {
        requireNode(d, params.node);
        check(params.plugin, await plugins[op](params.node, params.plugin));
        return ok();
      },
    );
  }

  t.add(
    {
      name: "unload_plugin_everywhere",
      method: "put",
      path: "/plugins/{plugin}/unload",
      descr: "Unload a plugin on every node of the cluster",
      tag,
      params: PluginParam,
      response: Done,
    },
    async ({ params }) => {
      checkAll(params.plugin, await plugins.unloadEverywhere(params.plugin));
      return ok();
    },
  );

  t.add(
    {
      name: "reload_plugin_everywhere",
      method: "put",
      path: "/plugins/{plugin}/reload",
      descr: "Reload a plugin on every node of the cluster",
      tag,
      params: PluginParam,
      response: Done,
    },
    async ({ params }) => {
      checkAll(params.plugin, await plugins.reloadEverywhere(params.plugin));
      return ok();
    },
  );
}
