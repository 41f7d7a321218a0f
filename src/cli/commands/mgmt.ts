// `mgmt list|insert <AppId> <Name>|update <AppId> <status>|lookup <AppId>|delete <AppId>`: the
// applications whose AppID/AppSecret authenticate the v3/v4 API. The secret is shown once, at
// insert; the store keeps only its hash.

import type { App } from "../api-types.ts";
import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";
import { UsageError } from "../errors.ts";

const line = (a: App): string =>
  `app_id: ${a.app_id}, secret: ******, name: ${a.name}, desc: ${a.desc}, status: ${a.status}, expired: ${a.expired}`;

export const mgmt: CommandGroup = {
  name: "mgmt",
  usage: [
    ["mgmt list", "List Applications"],
    ["mgmt insert <AppId> <Name>", "Add Application of REST API"],
    ["mgmt update <AppId> <status>", "Update Application of REST API"],
    ["mgmt lookup <AppId>", "Get Application of REST API"],
    ["mgmt delete <AppId>", "Delete Application of REST API"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "list": {
        arity(rest, 0, "mgmt list");
        const apps = await ctx.api.get<App[]>("/apps");
        ctx.emit(apps, () => apps.map(line));
        return;
      }
      case "insert": {
        arity(rest, 2, "mgmt insert");
        const out = await ctx.api.post<{ secret: string }>("/apps", { app_id: rest[0], name: rest[1] });
        ctx.emit({ app_id: rest[0], secret: out.secret }, () => [`AppSecret: ${out.secret}`]);
        return;
      }
      case "update": {
        arity(rest, 2, "mgmt update");
        const s = rest[1];
        if (s !== "true" && s !== "false") throw new UsageError(`status must be true or false, got ${s}`);
        await ctx.api.put(`/apps/${seg(rest[0])}`, { status: s === "true" });
        done(ctx, "update successfully.");
        return;
      }
      case "lookup": {
        arity(rest, 1, "mgmt lookup");
        const a = await ctx.api.get<App>(`/apps/${seg(rest[0])}`);
        ctx.emit(a, () => [line(a)]);
        return;
      }
      case "delete":
        arity(rest, 1, "mgmt delete");
        await ctx.api.delete(`/apps/${seg(rest[0])}`);
        done(ctx);
        return;
      default:
        throw unknownSub("mgmt", sub);
    }
  },
};
