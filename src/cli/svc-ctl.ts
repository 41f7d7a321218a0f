// `svc_ctl`: the node's command-line tool. A thin adapter over the management API (v4, HTTP
// Basic): it reads the listener and the default application from the node's configuration
// (etc/svc.conf, SVC_ variables), with --host/--port/--user/--password/--config on top, runs one
// command and prints the family's lines (or JSON with --json). Exit 0 on success; 1 with one line
// on stderr when the command fails (node down, refused, `Not Found.`); 2 for bad arguments, with
// the group's usage lines.

import { ConfigError } from "../config/index.ts";
import { ApiClient } from "./client.ts";
import { type CommandGroup, type Context, usageLines } from "./command.ts";
import { acl } from "./commands/acl.ts";
import { admins } from "./commands/admins.ts";
import { clientid, user } from "./commands/auth-entries.ts";
import { bridges } from "./commands/bridges.ts";
import { broker } from "./commands/broker.ts";
import { clients } from "./commands/clients.ts";
import { cluster } from "./commands/cluster.ts";
import { data } from "./commands/data.ts";
import { listeners } from "./commands/listeners.ts";
import { log } from "./commands/log.ts";
import { mgmt } from "./commands/mgmt.ts";
import { plugins } from "./commands/plugins.ts";
import { resourceTypes } from "./commands/resource-types.ts";
import { resources } from "./commands/resources.ts";
import { retainer } from "./commands/retainer.ts";
import { routes } from "./commands/routes.ts";
import { ruleActions } from "./commands/rule-actions.ts";
import { rules } from "./commands/rules.ts";
import { status } from "./commands/status.ts";
import { subscriptions } from "./commands/subscriptions.ts";
import { trace } from "./commands/trace.ts";
import { vm } from "./commands/vm.ts";
import { type EndpointOptions, resolveEndpoint } from "./endpoint.ts";
import { CliError, UsageError } from "./errors.ts";

export const GROUPS: readonly CommandGroup[] = [
  status,
  broker,
  cluster,
  clients,
  subscriptions,
  routes,
  plugins,
  listeners,
  vm,
  acl,
  admins,
  mgmt,
  clientid,
  user,
  retainer,
  data,
  log,
  trace,
  bridges,
  rules,
  ruleActions,
  resources,
  resourceTypes,
];

const OPTIONS = [
  "Options (anywhere on the line):",
  "  --host HOST  --port PORT      management API address (default: management.listener.http)",
  "  --user APPID --password SECRET application (default: management.default_application.*)",
  "  --config FILE                  node configuration (default: $SVC_CONFIG or etc/svc.conf)",
  "  --json                         print JSON instead of text",
];

interface Parsed {
  opts: EndpointOptions;
  json: boolean;
  args: string[];
}

export function parseArgs(argv: string[]): Parsed {
  const out: Parsed = { opts: {}, json: false, args: [] };
  const value = (i: number, flag: string): string => {
    const v = argv[i];
    if (v === undefined) throw new UsageError(`${flag} needs a value`);
    return v;
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === "--") {
      out.args.push(...argv.slice(i + 1));
      break;
    }
    const m = /^--(host|port|user|password|config)(?:=(.*))?$/.exec(a);
    if (m !== null) {
      const v = m[2] ?? value(++i, a);
      if (m[1] === "port") {
        if (!/^\d+$/.test(v) || Number(v) < 1 || Number(v) > 65535) throw new UsageError(`bad --port: ${v}`);
        out.opts.port = Number(v);
      } else out.opts[m[1] as "host" | "user" | "password" | "config"] = v;
    } else if (a === "--json") out.json = true;
    else out.args.push(a);
  }
  return out;
}

function helpText(group?: CommandGroup): string {
  if (group !== undefined) return `${usageLines(group.usage).join("\n")}\n`;
  const lines = ["Usage: svc_ctl <command> [<args>] [options]", "", ...GROUPS.flatMap((g) => usageLines(g.usage))];
  return `${[...lines, "", ...OPTIONS].join("\n")}\n`;
}

function makeContext(api: ApiClient, json: boolean): Context {
  let nodeName: Promise<string> | undefined;
  const print = (...lines: string[]) => {
    if (lines.length > 0) process.stdout.write(`${lines.join("\n")}\n`);
  };
  return {
    api,
    json,
    print,
    emit(value, human) {
      if (json) process.stdout.write(`${JSON.stringify(value, null, 2)}\n`);
      else print(...human());
    },
    node() {
      nodeName ??= api.status().then((s) => {
        const m = /^Node (\S+) is/.exec(s.text);
        if (m === null) throw new CliError(`unexpected /status answer: ${s.text.split("\n")[0]}`);
        return m[1];
      });
      return nodeName;
    },
  };
}

export async function main(argv: string[], env: NodeJS.ProcessEnv = process.env): Promise<number> {
  let group: CommandGroup | undefined;
  try {
    const { opts, json, args } = parseArgs(argv);
    const [cmd, ...rest] = args;
    if (cmd === undefined || cmd === "help" || cmd === "--help" || cmd === "-h") {
      process.stdout.write(helpText());
      return cmd === undefined ? 2 : 0;
    }
    group = GROUPS.find((g) => g.name === cmd);
    if (group === undefined) throw new UsageError(`unknown command: ${cmd}`);
    if (rest[0] === "help" || rest[0] === "--help") {
      process.stdout.write(helpText(group));
      return 0;
    }
    const api = new ApiClient(resolveEndpoint(opts, env));
    await group.run(makeContext(api, json), rest);
    return 0;
  } catch (err) {
    if (err instanceof UsageError) {
      process.stderr.write(`svc_ctl: ${err.message}\n${helpText(group)}`);
      return 2;
    }
    if (err instanceof ConfigError) process.stderr.write(`svc_ctl: configuration error: ${err.message}\n`);
    else if (err instanceof CliError) process.stderr.write(`${err.message}\n`);
    else process.stderr.write(`svc_ctl: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
