// Loads the configuration once at start: the file (etc/svc.conf format), then SVC_ environment
// variables, then CLI overrides, each overriding the one before, validated all together.
// Relative paths (the file itself, node.data_dir, acl_file, log.dir, certificate files) are
// resolved against the process working directory, or `cwd` when given.

import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { cliAssignments } from "./assignment.ts";
import { parseConfFile } from "./conf-file.ts";
import { Config } from "./config.ts";
import { ConfigError } from "./config-error.ts";
import { envAssignments } from "./env-overrides.ts";

export interface LoadOptions {
  /** Configuration file; when absent, `env.SVC_CONFIG`; when both are absent, defaults only. */
  readonly file?: string;
  /** Environment to read SVC_ variables from; the caller passes process.env (or a test's own). */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** Command-line settings by key, applied last. */
  readonly overrides?: Readonly<Record<string, string>>;
  /** Directory relative paths resolve against; default process.cwd(). */
  readonly cwd?: string;
}

/** Loads and validates everything; throws ConfigError naming each bad key and where it was set. */
export function loadConfig(opts: LoadOptions = {}): Config {
  const cwd = opts.cwd ?? process.cwd();
  const env = opts.env ?? {};
  const file = opts.file ?? env.SVC_CONFIG;
  let fromFile: ReturnType<typeof parseConfFile> = { assignments: [], issues: [] };
  if (file !== undefined) {
    let text: string;
    try {
      text = readFileSync(resolve(cwd, file), "utf8");
    } catch (cause) {
      const reason = cause instanceof Error ? cause.message : String(cause);
      throw new ConfigError(`${file}: cannot read the configuration file: ${reason}`, { cause });
    }
    fromFile = parseConfFile(text, file);
  }
  const layers = [...fromFile.assignments, ...envAssignments(env), ...cliAssignments(opts.overrides ?? {})];
  return new Config(layers, cwd, fromFile.issues);
}
