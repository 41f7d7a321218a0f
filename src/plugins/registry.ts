// The plugin registry: every feature the spec lists as a plugin registers a descriptor here when
// it is built, and is loaded, unloaded and reloaded at run time. The set loaded is kept in
// `<data_dir>/loaded_plugins` (the family's `{name, true}.` lines) so it survives a restart.

import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Logger } from "../telemetry/logger.ts";

export type PluginType = "auth" | "bridge" | "protocol" | "feature";

export interface Plugin {
  readonly name: string;
  readonly version: string;
  readonly description: string;
  readonly type: PluginType;
  load(): void | Promise<void>;
  unload(): void | Promise<void>;
}

export interface PluginInfo {
  name: string;
  version: string;
  description: string;
  active: boolean;
  type: PluginType;
}

/** Expected outcomes of plugin operations; `code` is what the API reports (spec section 3). */
export class PluginError extends Error {
  constructor(
    readonly code: "already_started" | "not_started" | "not_found",
    plugin: string,
  ) {
    super(`${plugin}: ${code}`);
    this.name = "PluginError";
  }
}

export class PluginRegistry {
  private readonly plugins = new Map<string, Plugin>();
  private readonly active = new Set<string>();
  private readonly file: string;

  constructor(
    dataDir: string,
    private readonly logger: Logger,
  ) {
    this.file = join(dataDir, "loaded_plugins");
  }

  register(p: Plugin): void {
    this.plugins.set(p.name, p);
  }

  list(): PluginInfo[] {
    return [...this.plugins.values()]
      .map((p) => ({
        name: p.name,
        version: p.version,
        description: p.description,
        active: this.active.has(p.name),
        type: p.type,
      }))
      .sort((a, b) => a.name.localeCompare(b.name));
  }

  isActive(name: string): boolean {
    return this.active.has(name);
  }

  private get(name: string): Plugin {
    const p = this.plugins.get(name);
    if (p === undefined) throw new PluginError("not_found", name);
    return p;
  }

  async load(name: string): Promise<void> {
    const p = this.get(name);
    if (this.active.has(name)) throw new PluginError("already_started", name);
    await p.load();
    this.active.add(name);
    this.persist();
    this.logger.info({ plugin: name }, "plugin loaded");
  }

  async unload(name: string): Promise<void> {
    const p = this.get(name);
    if (!this.active.has(name)) throw new PluginError("not_started", name);
    await p.unload();
    this.active.delete(name);
    this.persist();
    this.logger.info({ plugin: name }, "plugin unloaded");
  }

  async reload(name: string): Promise<void> {
    const p = this.get(name);
    if (!this.active.has(name)) throw new PluginError("not_started", name);
    await p.unload();
    this.active.delete(name);
    await p.load();
    this.active.add(name);
  }

  /** Loads the persisted set, or `defaults` on a first start. Unknown names are logged and skipped. */
  async loadAtStart(defaults: string[]): Promise<void> {
    const names = existsSync(this.file) ? parseLoadedPlugins(readFileSync(this.file, "utf8")) : defaults;
    for (const name of names) {
      if (!this.plugins.has(name)) {
        this.logger.warn({ plugin: name, file: this.file }, "unknown plugin in loaded_plugins, skipped");
        continue;
      }
      if (!this.active.has(name)) await this.load(name);
    }
    this.persist();
  }

  /** Unloads everything (shutdown), in reverse load order. */
  async stopAll(): Promise<void> {
    for (const name of [...this.active].reverse()) {
      try {
        await this.get(name).unload();
      } catch (err) {
        this.logger.error({ err, plugin: name }, "plugin failed to unload");
      }
    }
    this.active.clear();
  }

  private persist(): void {
    const body = `${[...this.active].map((n) => `{${n}, true}.`).join("\n")}\n`;
    mkdirSync(dirname(this.file), { recursive: true });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, body);
    renameSync(tmp, this.file);
  }
}

/** Reads `{name, true}.` lines (and bare names); `{name, false}.` lines are not loaded. */
export function parseLoadedPlugins(text: string): string[] {
  const out: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/%.*$/, "").trim();
    if (line === "") continue;
    const m = /^\{\s*([A-Za-z0-9_]+)\s*,\s*(true|false)\s*\}\.?$/.exec(line);
    if (m !== null) {
      if (m[2] === "true") out.push(m[1]);
    } else if (/^[A-Za-z0-9_]+\.?$/.test(line)) out.push(line.replace(/\.$/, ""));
  }
  return out;
}
