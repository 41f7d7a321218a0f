// `svc`: starts a node in the foreground. `svc start [--config FILE] [--set key=value ...]`;
// configuration errors print one message naming key and source and exit with code 1; SIGTERM and
// SIGINT drain the node (clients sent to other nodes, sessions handed over, up to
// node.drain_timeout) and exit 0; a second signal during the drain stops at once.

import { ConfigError, loadConfig } from "../config/index.ts";
import { applyGcTuning } from "../gc-tuning.ts";
import { applyMallocTuning } from "../malloc-tuning.ts";

const USAGE = `Usage: svc <command> [options]

Commands:
  start                 Run the node in the foreground
  version               Print the version
  help                  Show this help

Options for start:
  --config FILE         Configuration file (default: etc/svc.conf, or $SVC_CONFIG)
  --set KEY=VALUE       Set a configuration key (repeatable; applied after SVC_ variables)

Every configuration key can also be set by environment: SVC_ + the key upper-cased with
'.' written as '__' (SVC_LISTENER__TCP__EXTERNAL=127.0.0.1:21883). A port 0 binds an
ephemeral port; the node logs the ports it bound.
`;

interface StartArgs {
  file: string | undefined;
  overrides: Record<string, string>;
}

function parseStartArgs(argv: string[]): StartArgs {
  const out: StartArgs = { file: undefined, overrides: {} };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--config" || a === "-c") out.file = need(argv, ++i, a);
    else if (a.startsWith("--config=")) out.file = a.slice(9);
    else if (a === "--set") setOverride(out, need(argv, ++i, a));
    else if (a.startsWith("--set=")) setOverride(out, a.slice(6));
    else throw new UsageError(`unknown option ${a}`);
  }
  return out;
}

function need(argv: string[], i: number, flag: string): string {
  const v = argv[i];
  if (v === undefined) throw new UsageError(`${flag} needs a value`);
  return v;
}

function setOverride(out: StartArgs, kv: string): void {
  const eq = kv.indexOf("=");
  if (eq <= 0) throw new UsageError(`--set needs KEY=VALUE, got ${kv}`);
  out.overrides[kv.slice(0, eq).trim()] = kv.slice(eq + 1).trim();
}

class UsageError extends Error {
  override name = "UsageError";
}

async function start(argv: string[]): Promise<void> {
  const args = parseStartArgs(argv);
  applyMallocTuning();
  applyGcTuning();
  const env = process.env;
  const file = args.file ?? (env.SVC_CONFIG || "etc/svc.conf");
  const load = () => loadConfig({ file, env, overrides: args.overrides });
  // The node (about 700 modules) is loaded by `start` only: `svc help` and `svc version` answer
  // without it.
  const { startNode } = await import("../main.ts");
  // A supervisor: `cluster join`/`leave` restart the node in place with its new cluster record.
  let restarting: Promise<void> | null = null;
  const restart = (): void => {
    if (restarting !== null || stopping) return;
    restarting = (async () => {
      node.logger.info({}, "restarting");
      await node.stop();
      node = await startNode(load(), { onRestart: restart });
    })()
      .catch((err: unknown) => {
        process.stderr.write(`svc: restart failed: ${err instanceof Error ? err.message : String(err)}\n`);
        process.exit(1);
      })
      .finally(() => {
        restarting = null;
      });
  };
  let node = await startNode(load(), { onRestart: restart });
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) {
      node.logger.info({ signal }, "second signal: stopping now");
      void node.stop();
      return;
    }
    stopping = true;
    if (restarting !== null) await restarting;
    node.logger.info({ signal }, "draining");
    node.drain().then(
      () => process.exit(0),
      (err: unknown) => {
        node.logger.error({ err }, "stop failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", () => void stop("SIGTERM"));
  process.on("SIGINT", () => void stop("SIGINT"));
}

export async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  try {
    switch (cmd) {
      case "start":
        await start(rest);
        return -1; // keeps running
      case "version":
      case "--version":
        process.stdout.write(`${await version()}\n`);
        return 0;
      case undefined:
      case "help":
      case "--help":
      case "-h":
        process.stdout.write(USAGE);
        return cmd === undefined ? 1 : 0;
      default:
        throw new UsageError(`unknown command ${cmd}`);
    }
  } catch (err) {
    if (err instanceof ConfigError) process.stderr.write(`svc: configuration error: ${err.message}\n`);
    else if (err instanceof UsageError) process.stderr.write(`svc: ${err.message}\n\n${USAGE}`);
    else process.stderr.write(`svc: failed to start: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

async function version(): Promise<string> {
  const { readFile } = await import("node:fs/promises");
  const pkg = JSON.parse(await readFile(new URL("../../package.json", import.meta.url), "utf8")) as { version: string };
  return pkg.version;
}

const code = await main(process.argv.slice(2));
if (code >= 0) process.exitCode = code;
