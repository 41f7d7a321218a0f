// Plugin registry: load/unload/reload outcomes and the persisted loaded set.
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Plugin, PluginError, PluginRegistry, parseLoadedPlugins } from "../../src/plugins/registry.ts";
import { silentLogger } from "../../src/telemetry/logger.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function plugin(name: string, log: string[]): Plugin {
  return {
    name,
    version: "1.0.0",
    description: `${name} plugin`,
    type: "feature",
    load: () => void log.push(`load ${name}`),
    unload: () => void log.push(`unload ${name}`),
  };
}

function registry() {
  const dir = mkdtempSync(join(tmpdir(), "svc-plugins-"));
  dirs.push(dir);
  return { dir, reg: new PluginRegistry(dir, silentLogger()) };
}

describe("PluginRegistry", () => {
  it("loads, refuses a second load with already_started, unloads and reloads", async () => {
    const log: string[] = [];
    const { reg } = registry();
    reg.register(plugin("svc_a", log));
    await reg.load("svc_a");
    await expect(reg.load("svc_a")).rejects.toMatchObject({ code: "already_started" });
    await reg.reload("svc_a");
    await reg.unload("svc_a");
    await expect(reg.unload("svc_a")).rejects.toBeInstanceOf(PluginError);
    await expect(reg.load("svc_nope")).rejects.toMatchObject({ code: "not_found" });
    expect(log).toEqual(["load svc_a", "unload svc_a", "load svc_a", "unload svc_a"]);
    expect(reg.list()).toEqual([
      { name: "svc_a", version: "1.0.0", description: "svc_a plugin", active: false, type: "feature" },
    ]);
  });

  it("persists the loaded set and restores it on the next start", async () => {
    const log: string[] = [];
    const { dir, reg } = registry();
    reg.register(plugin("svc_a", log));
    reg.register(plugin("svc_b", log));
    await reg.loadAtStart(["svc_a", "svc_b"]);
    await reg.unload("svc_a");
    expect(readFileSync(join(dir, "loaded_plugins"), "utf8")).toBe("{svc_b, true}.\n");
    const again = new PluginRegistry(dir, silentLogger());
    again.register(plugin("svc_a", log));
    again.register(plugin("svc_b", log));
    await again.loadAtStart(["svc_a", "svc_b"]);
    expect(again.isActive("svc_a")).toBe(false);
    expect(again.isActive("svc_b")).toBe(true);
  });

  it("parses the family's loaded_plugins format", () => {
    expect(parseLoadedPlugins("{svc_a, true}.\n{svc_b,false}.\n% comment\nsvc_c.\n\n")).toEqual(["svc_a", "svc_c"]);
  });
});
