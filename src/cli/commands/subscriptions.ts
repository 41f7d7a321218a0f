// `subscriptions list|show <ClientId>|add <ClientId> <Topic> <QoS>|del <ClientId> <Topic>`:
// `<clientid> -> <topic>` lines; add and del go through `/mqtt/subscribe|unsubscribe`.

import type { Subscription } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";
import { NotFoundError, UsageError } from "../errors.ts";

const line = (s: Subscription): string => `${s.clientid} -> ${s.topic}`;

export const subscriptions: CommandGroup = {
  name: "subscriptions",
  usage: [
    ["subscriptions list", "List all subscriptions"],
    ["subscriptions show <ClientId>", "Show subscriptions of a client"],
    ["subscriptions add <ClientId> <Topic> <QoS>", "Add a static subscription manually"],
    ["subscriptions del <ClientId> <Topic>", "Delete a static subscription manually"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "subscriptions list");
        const all = await ctx.api.getAll<Subscription>("/subscriptions");
        ctx.emit(all, () => all.map(line));
        return;
      }
      case "show": {
        arity(rest, 1, "subscriptions show");
        const subs = await ctx.api.get<Subscription[]>(`/subscriptions/${seg(rest[0])}`);
        if (subs.length === 0) throw new NotFoundError();
        ctx.emit(subs, () => subs.map(line));
        return;
      }
      case "add": {
        arity(rest, 3, "subscriptions add");
        const [clientid, topic, q] = rest;
        if (!/^[012]$/.test(q)) throw new UsageError(`bad QoS: ${q} (0, 1 or 2)`);
        await ctx.api.post("/mqtt/subscribe", { clientid, topic, qos: Number(q) });
        done(ctx);
        return;
      }
      case "del": {
        arity(rest, 2, "subscriptions del");
        const [clientid, topic] = rest;
        await ctx.api.post("/mqtt/unsubscribe", { clientid, topic });
        done(ctx);
        return;
      }
      default:
        throw unknownSub("subscriptions", sub);
    }
  },
};
