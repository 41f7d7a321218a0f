// `clients list|show <ClientId>|kick <ClientId>`: the family's `Client(...)` lines.

import type { Client } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";
import { NotFoundError } from "../errors.ts";

export function clientLine(c: Client): string {
  const fields: [string, unknown][] = [
    ["username", c.username ?? "undefined"],
    ["peername", `${c.ip_address}:${c.port}`],
    ["clean_start", c.clean_start],
    ["keepalive", c.keepalive],
    ["session_expiry_interval", c.expiry_interval],
    ["subscriptions", c.subscriptions_cnt],
    ["inflight", c.inflight],
    ["awaiting_rel", c.awaiting_rel],
    ["delivered_msgs", c.send_msg],
    ["enqueued_msgs", c.mqueue_len],
    ["dropped_msgs", c.mqueue_dropped],
    ["connected", c.connected],
    ["created_at", c.created_at],
    ["connected_at", c.connected_at],
  ];
  return `Client(${c.clientid}, ${fields.map(([k, v]) => `${k}=${String(v)}`).join(", ")})`;
}

export const clients: CommandGroup = {
  name: "clients",
  usage: [
    ["clients list", "List all clients"],
    ["clients show <ClientId>", "Show a client"],
    ["clients kick <ClientId>", "Kick out a client"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "clients list");
        const all = await ctx.api.getAll<Client>("/clients");
        ctx.emit(all, () => all.map(clientLine));
        return;
      }
      case "show": {
        arity(rest, 1, "clients show");
        const found = await ctx.api.get<Client[]>(`/clients/${seg(rest[0])}`);
        if (found.length === 0) throw new NotFoundError();
        ctx.emit(found[0], () => found.map(clientLine));
        return;
      }
      case "kick":
        arity(rest, 1, "clients kick");
        await ctx.api.delete(`/clients/${seg(rest[0])}`);
        done(ctx);
        return;
      default:
        throw unknownSub("clients", sub);
    }
  },
};
