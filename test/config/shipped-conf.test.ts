import { readFileSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { LISTENER_KINDS, loadConfig, SCHEMA, type SchemaEntry } from "../../src/config/index.ts";
import { useTempDir } from "./temp-dir.ts";

const tmp = useTempDir();

const root = fileURLToPath(new URL("../../", import.meta.url));
const confPath = `${root}etc/svc.conf`;
const lines = readFileSync(confPath, "utf8").split("\n");

/** The keys svc.conf must document, with the default each shows. */
function documentedKeys(): [string, SchemaEntry, string | undefined][] {
  const out: [string, SchemaEntry, string | undefined][] = [];
  for (const [key, e] of Object.entries<SchemaEntry>(SCHEMA)) {
    if (key.startsWith("zone.$zone.")) {
      out.push([key.replace("$zone", "external"), e, e.default]);
      if (e.defaultFor?.internal !== undefined) out.push([key.replace("$zone", "internal"), e, e.defaultFor.internal]);
    } else if (key.startsWith("listener.$kind.$name.")) {
      for (const kind of LISTENER_KINDS) {
        if (e.only !== undefined && !e.only.includes(kind)) continue;
        out.push([key.replace("$kind.$name", `${kind}.external`), e, e.defaultFor?.[kind] ?? e.default]);
      }
    } else if (!key.includes("$")) {
      out.push([key, e, e.default]);
    }
  }
  return out;
}

describe("etc/svc.conf", () => {
  it("loads cleanly and gives exactly the defaults", () => {
    const shipped = loadConfig({ file: confPath, cwd: root });
    const defaults = loadConfig({ cwd: root });
    const strip = (c: typeof shipped) => c.entries().map(({ key, value }) => ({ key, value }));
    expect(strip(shipped)).toEqual(strip(defaults));
    expect(shipped.listeners()).toEqual(defaults.listeners());
  });

  it("documents every key with its description and default above it", () => {
    for (const [key, e, def] of documentedKeys()) {
      const i = lines.findIndex((l) => new RegExp(`^(# )?${key.replaceAll(".", "\\.")} =( |$)`).test(l));
      expect(i, `${key} missing from svc.conf`).toBeGreaterThan(0);
      const above = lines.slice(Math.max(0, i - 3), i);
      expect(above, key).toContain(`## ${e.description}`);
      const shown = def === undefined ? (e.fallback ? `inherits ${e.fallback}` : "unset") : def === "" ? "empty" : def;
      expect(above, key).toContain(`## Default: ${shown}`);
      const written = !lines[i].startsWith("#");
      expect(written, `${key}: only node and listener addresses are written out`).toBe(
        key.startsWith("node.") || /^listener\.\w+\.external$/.test(key),
      );
      if (def !== undefined && def !== "")
        expect(lines[i], key).toMatch(new RegExp(` = ${def.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}$`));
    }
  });

  it("leaves the example lines valid when uncommented", () => {
    const text = lines
      .map((l) => l.replace(/^# (?=[a-z_][a-z0-9_.]* =)/, ""))
      .filter((l) => !/^\S+file = /.test(l)) // the example certificate paths do not exist
      .join("\n");
    const file = tmp.write("uncommented.conf", `${text}\ncluster.discovery = static\n`);
    const c = loadConfig({ file, cwd: root });
    expect(c.get("cluster.static.seeds")).toEqual(["svc1@127.0.0.1", "svc2@127.0.0.1"]);
    expect(c.listeners().map((l) => `${l.kind}.${l.name}`)).toContain("tcp.internal");
  });
});

describe("etc/acl.conf", () => {
  it("holds the default rules in Erlang-term form", () => {
    const rules = readFileSync(`${root}etc/acl.conf`, "utf8")
      .split("\n")
      .filter((l) => l.startsWith("{"));
    expect(rules).toEqual([
      '{allow, {user, "dashboard"}, subscribe, ["$SYS/#"]}.',
      '{allow, {ipaddrs, ["127.0.0.1", "::1"]}, pubsub, ["$SYS/#", "#"]}.',
      '{deny, all, subscribe, ["$SYS/#", {eq, "#"}]}.',
      "{allow, all}.",
    ]);
  });
});
