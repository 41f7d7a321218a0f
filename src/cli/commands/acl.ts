// `acl cache-clean all|<ClientId>`: empties every client's ACL cache on the node, or one
// client's (wherever it is connected).

import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";

export const acl: CommandGroup = {
  name: "acl",
  usage: [
    ["acl cache-clean all", "Clears acl cache on all clients of the node"],
    ["acl cache-clean <ClientId>", "Clears acl cache for a client"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    if (sub !== "cache-clean") throw unknownSub("acl", sub);
    arity(rest, 1, "acl cache-clean");
    if (rest[0] === "all") {
      await ctx.api.delete("/acl_cache");
      done(ctx, "ACL cache drain started");
      return;
    }
    await ctx.api.delete(`/clients/${seg(rest[0])}/acl_cache`);
    done(ctx);
  },
};
