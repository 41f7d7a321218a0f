// `log primary-level [<Level>]`: the node's log level, read or set at run time.

import { arity, type CommandGroup, unknownSub } from "../command.ts";

export const log: CommandGroup = {
  name: "log",
  usage: [
    ["log primary-level", "Show the primary log level now"],
    ["log primary-level <Level>", "Set the primary log level"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    if (sub !== "primary-level") throw unknownSub("log", sub);
    if (rest.length > 1) arity(rest, 1, "log primary-level");
    const out =
      rest.length === 0
        ? await ctx.api.get<{ level: string }>("/log/primary_level")
        : await ctx.api.put<{ level: string }>("/log/primary_level", { level: rest[0] });
    ctx.emit(out, () => [out.level]);
  },
};
