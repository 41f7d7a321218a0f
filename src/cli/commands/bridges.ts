// `bridges list|start <Name>|stop <Name>|forwards <Name>|add-forward <Name> <Topic>|
// del-forward <Name> <Topic>|subscriptions <Name>|add-subscription <Name> <Topic> <Qos>|
// del-subscription <Name> <Topic>`: the bridges of the node that answers (svc_bridge_mqtt), in
// the family's `emqx_ctl bridges` lines.

import type { Bridge, BridgeChanged, BridgeSubscription } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, type Context, unknownSub } from "../command.ts";
import { CliError, NotFoundError, UsageError } from "../errors.ts";

/** Runs an API call; a refusal of the API (unknown bridge, bad filter or QoS) becomes `fail(reason)`. */
async function attempt<T>(call: () => Promise<T>, fail: (reason: string) => string): Promise<T> {
  try {
    return await call();
  } catch (err) {
    if (err instanceof NotFoundError) throw new CliError(fail(err.detail === "" ? "not found" : err.detail));
    if (err instanceof CliError && !/^(Node is not running|authentication failed)/.test(err.message))
      throw new CliError(fail(err.message));
    throw err;
  }
}

const path = (name: string, ...rest: string[]): string => ["/bridges", seg(name), ...rest].join("/");

function changedLine(ctx: Context, out: BridgeChanged, line: string): void {
  ctx.emit({ result: "ok", changed: out.changed }, () => [line]);
}

export const bridges: CommandGroup = {
  name: "bridges",
  usage: [
    ["bridges list", "List bridges"],
    ["bridges start <Name>", "Start a bridge"],
    ["bridges stop <Name>", "Stop a bridge"],
    ["bridges forwards <Name>", "Show a bridge forward topic"],
    ["bridges add-forward <Name> <Topic>", "Add bridge forward topic"],
    ["bridges del-forward <Name> <Topic>", "Delete bridge forward topic"],
    ["bridges subscriptions <Name>", "Show a bridge subscriptions topic"],
    ["bridges add-subscription <Name> <Topic> <Qos>", "Add bridge subscriptions topic"],
    ["bridges del-subscription <Name> <Topic>", "Delete bridge subscriptions topic"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "bridges list");
        const all = await ctx.api.get<Bridge[]>("/bridges");
        ctx.emit(all, () => all.map((b) => `name: ${b.name}     status: ${b.status}`));
        return;
      }
      case "start": {
        arity(rest, 1, "bridges start");
        const out = await attempt(
          () => ctx.api.put<BridgeChanged>(path(rest[0], "start")),
          (r) => `Start bridge failed: ${r}`,
        );
        changedLine(ctx, out, out.changed ? "Start bridge successfully." : "Bridge already started.");
        return;
      }
      case "stop": {
        arity(rest, 1, "bridges stop");
        const out = await attempt(
          () => ctx.api.put<BridgeChanged>(path(rest[0], "stop")),
          (r) => `Stop bridge failed: ${r}`,
        );
        changedLine(ctx, out, out.changed ? "Stop bridge successfully." : "Bridge already stopped.");
        return;
      }
      case "forwards": {
        arity(rest, 1, "bridges forwards");
        const all = await attempt(
          () => ctx.api.get<string[]>(path(rest[0], "forwards")),
          (r) => `Show bridge forwards failed: ${r}`,
        );
        ctx.emit(all, () => all.map((t) => `topic:   ${t}`));
        return;
      }
      case "add-forward": {
        arity(rest, 2, "bridges add-forward");
        const [name, topic] = rest;
        const out = await attempt(
          () => ctx.api.post<BridgeChanged>(path(name, "forwards"), { topic }),
          (r) => `Add-forward failed reason: ${r}.`,
        );
        changedLine(ctx, out, "Add-forward topic successfully.");
        return;
      }
      case "del-forward": {
        arity(rest, 2, "bridges del-forward");
        const [name, topic] = rest;
        const out = await attempt(
          () => ctx.api.delete<BridgeChanged>(path(name, "forwards", seg(topic))),
          (r) => `Del-forward failed reason: ${r}.`,
        );
        changedLine(ctx, out, "Del-forward topic successfully.");
        return;
      }
      case "subscriptions": {
        arity(rest, 1, "bridges subscriptions");
        const all = await attempt(
          () => ctx.api.get<BridgeSubscription[]>(path(rest[0], "subscriptions")),
          (r) => `Show bridge subscriptions failed: ${r}`,
        );
        ctx.emit(all, () => all.map((s) => `topic: ${s.topic}, qos: ${s.qos}`));
        return;
      }
      case "add-subscription": {
        arity(rest, 3, "bridges add-subscription");
        const [name, topic, q] = rest;
        if (!/^\d+$/.test(q)) throw new UsageError(`bad Qos: ${q} (0, 1 or 2)`);
        const out = await attempt(
          () => ctx.api.post<BridgeChanged>(path(name, "subscriptions"), { topic, qos: Number(q) }),
          (r) => `Add-subscription failed reason: ${r}.`,
        );
        changedLine(ctx, out, "Add-subscription topic successfully.");
        return;
      }
      case "del-subscription": {
        arity(rest, 2, "bridges del-subscription");
        const [name, topic] = rest;
        const out = await attempt(
          () => ctx.api.delete<BridgeChanged>(path(name, "subscriptions", seg(topic))),
          (r) => `Del-subscription failed reason: ${r}.`,
        );
        changedLine(ctx, out, "Del-subscription topic successfully.");
        return;
      }
      default:
        throw unknownSub("bridges", sub);
    }
  },
};
