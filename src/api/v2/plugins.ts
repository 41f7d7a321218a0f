// v2 plugins (spec 001 §4): the node's plugin list `{name, version, description, active}` and
// `PUT /nodes/{node_name}/plugins/{plugin_name}` with `active` true (start) or false (stop):
// 110 when it is already loaded, 111 when it is already unloaded.

import { z } from "@hono/zod-openapi";
import { requireNode } from "../common.ts";
import type { ApiDeps } from "../deps.ts";
import { v2done, v2ok } from "../envelope.ts";
import { ApiError, CODE, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { V2Plugin, v2Done, v2Envelope } from "../schemas.ts";
import { NodeNameParam } from "./params.ts";

const NodePluginParam = NodeNameParam.extend({
  plugin_name: z
    .string()
    .min(1)
    .openapi({ param: { name: "plugin_name", in: "path" }, description: "Plugin name" }),
});

export function v2PluginRoutes(t: RouteTable, d: ApiDeps): void {
  const plugins = d.services.plugins;

  t.add(
    {
      name: "node_plugins",
      method: "get",
      path: "/nodes/{node_name}/plugins",
      descr: "Plugins of a node",
      tag: "plugins",
      params: NodeNameParam,
      response: v2Envelope(z.array(V2Plugin)),
    },
    async ({ params }) => {
      requireNode(d, params.node_name);
      const list = await plugins.list(params.node_name);
      return v2ok(
        list.map((p) => ({ name: p.name, version: p.version, description: p.description, active: p.active })),
      );
    },
  );

  t.add(
    {
      name: "node_plugin_active",
      method: "put",
      path: "/nodes/{node_name}/plugins/{plugin_name}",
      descr: "Start (active true) or stop (active false) a plugin on a node",
      tag: "plugins",
      params: NodePluginParam,
      body: z.object({ active: z.boolean() }),
      response: v2Done,
    },
    async ({ params, body }) => {
      requireNode(d, params.node_name);
      const name = params.plugin_name;
      const out = body.active
        ? await plugins.load(params.node_name, name)
        : await plugins.unload(params.node_name, name);
      if (out === "not_found") throw notFound(`plugin ${name}`);
      if (out === "already_started") throw new ApiError(409, CODE.pluginLoaded, `plugin ${name} has been loaded`);
      if (out === "not_started") throw new ApiError(409, CODE.pluginUnloaded, `plugin ${name} has been unloaded`);
      return v2done();
    },
  );
}
