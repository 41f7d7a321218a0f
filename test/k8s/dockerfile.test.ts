// What the Dockerfile claims, checked without a container engine: the files it copies exist and
// are not excluded by .dockerignore, it exposes the spec's ports and runs as the `node` user, the
// compiled code imports only production dependencies, and `svc start` runs from a clean
// `npm ci --omit=dev` tree laid out like the image (/opt/svc: dist, bin, etc), answers the
// HEALTHCHECK's /status, and exits 0 on SIGTERM.

import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { builtinModules } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitUntil } from "../helpers/wait.ts";
import { ROOT } from "./render.ts";

interface Instruction {
  cmd: string;
  args: string;
}

function instructions(text: string): Instruction[] {
  const joined = text.replace(/\\\n/g, " ");
  return joined
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"))
    .map((l) => {
      const m = /^(\S+)\s+(.*)$/.exec(l);
      return { cmd: (m?.[1] ?? l).toUpperCase(), args: m?.[2] ?? "" };
    });
}

const dockerfile = instructions(readFileSync(join(ROOT, "Dockerfile"), "utf8"));
const of = (cmd: string) => dockerfile.filter((i) => i.cmd === cmd);
const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
const entrypoint = JSON.parse(of("ENTRYPOINT")[0]?.args ?? "[]") as string[];
/** The Node flags the image runs svc with (`node <flags> /opt/svc/bin/svc.js`). */
const nodeFlags = entrypoint.slice(1, -1);

function jsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((n) => {
    const p = join(dir, n);
    return statSync(p).isDirectory() ? jsFiles(p) : p.endsWith(".js") ? [p] : [];
  });
}

describe("Dockerfile", () => {
  it("every file it copies from the build context exists and is not in .dockerignore", () => {
    const ignored = readFileSync(join(ROOT, ".dockerignore"), "utf8")
      .split("\n")
      .map((l) => l.trim())
      .filter((l) => l !== "" && !l.startsWith("#"));
    const copies = of("COPY").filter((c) => !c.args.startsWith("--from"));
    expect(copies.length).toBeGreaterThan(0);
    for (const c of copies) {
      const parts = c.args.split(/\s+/);
      for (const src of parts.slice(0, -1)) {
        expect(existsSync(join(ROOT, src)), src).toBe(true);
        expect(ignored, src).not.toContain(src);
      }
    }
  });

  it("Node 24 slim base, production dependencies, node user, spec ports, /status health check", () => {
    for (const f of of("FROM")) expect(f.args).toMatch(/^node:24-[a-z]+-slim\b/);
    expect(of("RUN").some((r) => r.args.includes("npm ci --omit=dev"))).toBe(true);
    expect(of("USER").at(-1)?.args).toBe("node");
    const exposed = of("EXPOSE").flatMap((e) => e.args.split(/\s+/).map(Number));
    for (const p of [1883, 8883, 8083, 8084, 8081, 8080, 18083, 5369]) expect(exposed).toContain(p);
    expect(of("HEALTHCHECK")[0]?.args).toContain("http://127.0.0.1:8081/status");
    expect(entrypoint).toEqual(["node", ...nodeFlags, "/opt/svc/bin/svc.js"]);
    expect(nodeFlags).toContain("--v8-pool-size=0");
    // `npm start` runs svc with the image's flags.
    expect(pkg.scripts.start).toBe(["node", ...nodeFlags, "bin/svc.js", "start"].join(" "));
    expect(JSON.parse(of("CMD").at(-1)?.args ?? "[]")).toEqual(["start"]);
  });
});

describe("the image's tree: npm ci --omit=dev, dist, bin, etc", () => {
  let tree: string;
  let proc: ChildProcess | undefined;
  let npmOk = false;

  beforeAll(async () => {
    tree = mkdtempSync(join(tmpdir(), "svc-image-"));
    for (const f of ["package.json", "package-lock.json"]) cpSync(join(ROOT, f), join(tree, f));
    for (const d of ["bin", "etc"]) cpSync(join(ROOT, d), join(tree, d), { recursive: true });
    const run = promisify(execFile);
    // Compiled like the image's build stage, into the tree (the repository's dist is left alone).
    const build = run("npx", ["tsc", "-p", "tsconfig.build.json", "--outDir", join(tree, "dist")], { cwd: ROOT });
    const install = run(
      "npm",
      ["ci", "--omit=dev", "--ignore-scripts", "--no-audit", "--no-fund", "--prefer-offline"],
      { cwd: tree, timeout: 60_000 },
    ).then(
      () => {
        npmOk = true;
      },
      (err: { stderr?: string }) => {
        const msg = err.stderr ?? String(err);
        console.warn(
          `!!! npm ci --omit=dev failed or took over 60 s; the start check is skipped: ${msg.slice(0, 500)}`,
        );
      },
    );
    await Promise.all([build, install]);
  }, 120_000);

  afterAll(async () => {
    if (proc !== undefined && proc.exitCode === null && proc.signalCode === null) {
      const exited = new Promise((r) => proc?.once("exit", r));
      proc.kill("SIGKILL");
      await exited;
    }
    if (tree) rmSync(tree, { recursive: true, force: true });
  });

  it("the compiled code imports only node built-ins, its own files and production dependencies", () => {
    const deps = new Set(Object.keys(pkg.dependencies));
    const builtins = new Set(builtinModules);
    const missing = new Set<string>();
    const seen = new Set<string>();
    for (const file of jsFiles(join(tree, "dist"))) {
      const src = readFileSync(file, "utf8");
      for (const m of src.matchAll(
        /(?:^|[^.\w])(?:import|export)\s[^"'`;]*?from\s*["']([^"']+)["']|import\(\s*["']([^"']+)["']\s*\)|^import\s*["']([^"']+)["']/gm,
      )) {
        const spec = m[1] ?? m[2] ?? m[3];
        if (spec.startsWith(".") || spec.startsWith("node:") || builtins.has(spec)) continue;
        const name = spec.startsWith("@") ? spec.split("/").slice(0, 2).join("/") : spec.split("/")[0];
        seen.add(name);
        if (!deps.has(name)) missing.add(`${name} (${file.slice(tree.length + 1)})`);
      }
    }
    expect([...missing]).toEqual([]);
    for (const used of ["etcd3", "hono", "mqtt-packet"]) expect(seen).toContain(used);
  });

  it("svc start runs from the tree, answers /status, and exits 0 on SIGTERM", async (ctx) => {
    if (!npmOk) ctx.skip();
    const dataDir = join(tree, "data");
    const set = {
      "node.data_dir": dataDir,
      "listener.tcp.external": "127.0.0.1:0",
      "listener.ssl.external": "127.0.0.1:0",
      "listener.ws.external": "127.0.0.1:0",
      "listener.wss.external": "127.0.0.1:0",
      "management.listener.http": "127.0.0.1:0",
      "management.listener.http_v2": "127.0.0.1:0",
      "dashboard.listener.http": "off",
      "rpc.tcp_server_port": "0",
    };
    const env: NodeJS.ProcessEnv = { PATH: process.env.PATH, HOME: process.env.HOME, NODE_ENV: "production" };
    const args = [
      ...nodeFlags,
      "bin/svc.js",
      "start",
      ...Object.entries(set).flatMap(([k, v]) => ["--set", `${k}=${v}`]),
    ];
    const child = spawn(process.execPath, args, { cwd: tree, env, stdio: ["ignore", "pipe", "pipe"] });
    proc = child;
    let out = "";
    child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
    const apiPort = () => /"listener":"http:management:http","host":"[^"]+","port":(\d+)/.exec(out)?.[1];
    await waitUntil(() => apiPort() !== undefined || child.exitCode !== null, "the management listener", 30_000);
    expect(child.exitCode, out).toBeNull();
    const url = `http://127.0.0.1:${apiPort()}/status`;
    let status = 0;
    await waitUntil(
      async () => {
        status = await fetch(url).then(
          (r) => r.status,
          () => 0,
        );
        return status === 200;
      },
      "/status 200",
      30_000,
    );
    expect(status).toBe(200);
    // The HEALTHCHECK's own command, pointed at this port.
    const hc = JSON.parse(of("HEALTHCHECK")[0].args.replace(/^.*?CMD\s+/, "")) as string[];
    const probe = hc.map((a) => a.replace("http://127.0.0.1:8081/status", url));
    expect(() => execFileSync(process.execPath, probe.slice(1), { timeout: 10_000 })).not.toThrow();
    // svc_ctl from the same tree.
    const ctl = execFileSync(process.execPath, ["bin/svc_ctl.js", "--port", String(apiPort()), "status"], {
      cwd: tree,
      env,
      encoding: "utf8",
    });
    expect(ctl).toMatch(/is started/);
    const exit = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
    child.kill("SIGTERM");
    expect(await exit, out).toBe(0);
  }, 60_000);
});
