// `admins add <Username> <Password> [<Tags>]|passwd <Username> <Password>|del <Username>`: the
// dashboard users.

import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";
import { UsageError } from "../errors.ts";

export const admins: CommandGroup = {
  name: "admins",
  usage: [
    ["admins add <Username> <Password> <Tags>", "Add dashboard user"],
    ["admins passwd <Username> <Password>", "Reset dashboard user password"],
    ["admins del <Username>", "Delete dashboard user"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "add":
        if (rest.length < 2 || rest.length > 3) throw new UsageError("admins add takes 2 or 3 arguments");
        await ctx.api.post("/users", { username: rest[0], password: rest[1], tags: rest[2] ?? "" });
        done(ctx);
        return;
      case "passwd":
        arity(rest, 2, "admins passwd");
        await ctx.api.put(`/users/${seg(rest[0])}/password`, { password: rest[1] });
        done(ctx);
        return;
      case "del":
        arity(rest, 1, "admins del");
        await ctx.api.delete(`/users/${seg(rest[0])}`);
        done(ctx);
        return;
      default:
        throw unknownSub("admins", sub);
    }
  },
};
