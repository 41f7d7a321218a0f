// `retainer info|topics|clean [<Topic>]`: the retained messages of the node.

import { type CommandGroup, unknownSub } from "../command.ts";
import { UsageError } from "../errors.ts";

export const retainer: CommandGroup = {
  name: "retainer",
  usage: [
    ["retainer info", "Show the count of retained messages"],
    ["retainer topics", "Show all topics of retained messages"],
    ["retainer clean", "Clean all retained messages"],
    ["retainer clean <Topic>", "Clean retained messages by the specified topic filter"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "info": {
        if (rest.length > 0) throw new UsageError("retainer info takes no arguments");
        const i = await ctx.api.get<{ retained: number }>("/retainer");
        ctx.emit(i, () => [`retained/total: ${i.retained}`]);
        return;
      }
      case "topics": {
        if (rest.length > 0) throw new UsageError("retainer topics takes no arguments");
        const topics = await ctx.api.get<string[]>("/retainer/topics");
        ctx.emit(topics, () => topics);
        return;
      }
      case "clean": {
        if (rest.length > 1) throw new UsageError("retainer clean takes at most 1 argument");
        const q = rest.length === 0 ? "" : `?topic=${encodeURIComponent(rest[0])}`;
        const out = await ctx.api.delete<{ cleaned: number }>(`/retainer${q}`);
        ctx.emit(out, () => [`Cleaned ${out.cleaned} retained messages`]);
        return;
      }
      default:
        throw unknownSub("retainer", sub);
    }
  },
};
