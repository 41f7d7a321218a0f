// `trace list|start client <ClientId> <File> [<Level>]|start topic <Topic> <File> [<Level>]|
// stop client <ClientId>|stop topic <Topic>`: message traces to a file on the node.

import type { Trace } from "../api-types.ts";
import { seg } from "../client.ts";
import { type CommandGroup, unknownSub } from "../command.ts";
import { CliError, NotFoundError, UsageError } from "../errors.ts";

const KIND = { client: "clientid", topic: "topic" } as const;

function kindOf(k: string | undefined): "client" | "topic" {
  if (k === "client" || k === "topic") return k;
  throw new UsageError(`trace type must be client or topic, got ${k ?? "nothing"}`);
}

export const trace: CommandGroup = {
  name: "trace",
  usage: [
    ["trace list", "List all traces started"],
    ["trace start client <ClientId> <File> [<Level>]", "Traces for a client"],
    ["trace stop client <ClientId>", "Stop tracing for a client"],
    ["trace start topic <Topic> <File> [<Level>]", "Traces for a topic"],
    ["trace stop topic <Topic>", "Stop tracing for a topic"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        if (rest.length > 0) throw new UsageError("trace list takes no arguments");
        const all = await ctx.api.get<Trace[]>("/traces");
        ctx.emit(all, () =>
          all.map((t) => `Trace(${KIND[t.type]}=${t.name}, level=${t.level}, destination="${t.file}")`),
        );
        return;
      }
      case "start": {
        const kind = kindOf(rest[0]);
        if (rest.length < 3 || rest.length > 4) throw new UsageError(`trace start ${kind} takes 2 or 3 arguments`);
        const [, name, file, level] = rest;
        try {
          await ctx.api.post("/traces", { type: kind, name, file, level });
        } catch (err) {
          if (err instanceof CliError && !err.message.startsWith("Node is not running"))
            throw new CliError(`trace ${kind} ${name} failed: ${err.message}`);
          throw err;
        }
        ctx.emit({ result: "ok" }, () => [`trace ${kind} ${name} successfully`]);
        return;
      }
      case "stop": {
        const kind = kindOf(rest[0]);
        if (rest.length !== 2) throw new UsageError(`trace stop ${kind} takes 1 argument`);
        const name = rest[1];
        try {
          await ctx.api.delete(`/traces/${kind}/${seg(name)}`);
        } catch (err) {
          if (err instanceof NotFoundError) throw new CliError(`stop tracing ${kind} ${name} failed: not_found`);
          throw err;
        }
        ctx.emit({ result: "ok" }, () => [`stop tracing ${kind} ${name} successfully`]);
        return;
      }
      default:
        throw unknownSub("trace", sub);
    }
  },
};
