// Plugin views and lifecycle for the API and CLI (spec 000 §2 "Plugin", §3 plugin transitions):
// list per node and cluster-wide, load / unload / reload on a node, unload / reload everywhere.
// Outcomes are values: `already_started`, `not_started`, `not_found` are what the API reports.
// The per-node calls run on that node (handlers `mgmt.plugins`, `mgmt.pluginOp`); the cluster
// list leaves out a node that does not answer, the `*Everywhere` operations fail with it.

import { PluginError, type PluginInfo, type PluginRegistry } from "../plugins/registry.ts";
import { type ClusterCalls, fromEvery } from "./cluster-calls.ts";

export type { PluginInfo };

export type PluginOutcome = "ok" | "already_started" | "not_started" | "not_found";

export interface NodePlugins {
  node: string;
  plugins: PluginInfo[];
}

export interface NodeOutcome {
  node: string;
  outcome: PluginOutcome;
}

type PluginOp = "load" | "unload" | "reload";

export class PluginService {
  constructor(
    private readonly registry: PluginRegistry,
    private readonly calls: ClusterCalls,
  ) {
    calls.register("mgmt.plugins", () => this.registry.list());
    calls.register("mgmt.pluginOp", (a) => {
      const { op, name } = a as { op: PluginOp; name: string };
      return outcome(() => this.registry[op](name));
    });
  }

  list(node: string): Promise<PluginInfo[]> {
    return this.calls.call<PluginInfo[]>(node, "mgmt.plugins", null);
  }

  async cluster(): Promise<NodePlugins[]> {
    const answers = await fromEvery<PluginInfo[]>(this.calls, "mgmt.plugins", null);
    return answers.map((a) => ({ node: a.node, plugins: a.value }));
  }

  load(node: string, name: string): Promise<PluginOutcome> {
    return this.op(node, "load", name);
  }

  unload(node: string, name: string): Promise<PluginOutcome> {
    return this.op(node, "unload", name);
  }

  reload(node: string, name: string): Promise<PluginOutcome> {
    return this.op(node, "reload", name);
  }

  /** Unloads on every node (the family has no cluster-wide load). */
  async unloadEverywhere(name: string): Promise<NodeOutcome[]> {
    return Promise.all(this.calls.nodes().map(async (node) => ({ node, outcome: await this.unload(node, name) })));
  }

  async reloadEverywhere(name: string): Promise<NodeOutcome[]> {
    return Promise.all(this.calls.nodes().map(async (node) => ({ node, outcome: await this.reload(node, name) })));
  }

  private op(node: string, op: PluginOp, name: string): Promise<PluginOutcome> {
    return this.calls.call<PluginOutcome>(node, "mgmt.pluginOp", { op, name });
  }
}

async function outcome(op: () => Promise<void>): Promise<PluginOutcome> {
  try {
    await op();
    return "ok";
  } catch (err) {
    if (err instanceof PluginError) return err.code;
    throw err;
  }
}
