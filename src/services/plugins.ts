// Plugin views and lifecycle for the API and CLI (spec 000 §2 "Plugin", §3 plugin transitions):
// list per node and cluster-wide, load / unload / reload on a node, unload / reload everywhere.
// Outcomes are values: `already_started`, `not_started`, `not_found` are what the API reports.
// Single node for now; the per-node calls take the node name so the cluster issue can route them.

import { PluginError, type PluginInfo, type PluginRegistry } from "../plugins/registry.ts";

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

export class PluginService {
  constructor(
    private readonly registry: PluginRegistry,
    private readonly nodes: () => string[],
  ) {}

  async list(_node: string): Promise<PluginInfo[]> {
    return this.registry.list();
  }

  async cluster(): Promise<NodePlugins[]> {
    return Promise.all(this.nodes().map(async (node) => ({ node, plugins: await this.list(node) })));
  }

  load(_node: string, name: string): Promise<PluginOutcome> {
    return outcome(() => this.registry.load(name));
  }

  unload(_node: string, name: string): Promise<PluginOutcome> {
    return outcome(() => this.registry.unload(name));
  }

  reload(_node: string, name: string): Promise<PluginOutcome> {
    return outcome(() => this.registry.reload(name));
  }

  /** Unloads on every node (the family has no cluster-wide load). */
  async unloadEverywhere(name: string): Promise<NodeOutcome[]> {
    return Promise.all(this.nodes().map(async (node) => ({ node, outcome: await this.unload(node, name) })));
  }

  async reloadEverywhere(name: string): Promise<NodeOutcome[]> {
    return Promise.all(this.nodes().map(async (node) => ({ node, outcome: await this.reload(node, name) })));
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
