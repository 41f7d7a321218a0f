// `clientid list|add|update|del` and `user list|add|update|del`: the credentials of
// svc_auth_clientid (`/auth_clientid`) and svc_auth_username (`/auth_username`).

import { seg } from "../client.ts";
import { arity, type CommandGroup, done, unknownSub } from "../command.ts";

function entries(group: "clientid" | "user", path: string, field: "clientid" | "username", what: string): CommandGroup {
  const Id = field === "clientid" ? "<ClientId>" : "<Username>";
  return {
    name: group,
    usage: [
      [`${group} list`, `List ${what} entries`],
      [`${group} add ${Id} <Password>`, `Add ${what} entry`],
      [`${group} update ${Id} <NewPassword>`, `Update ${what} entry`],
      [`${group} del ${Id}`, `Delete ${what} entry`],
    ],
    async run(ctx, args) {
      const [sub, ...rest] = args;
      switch (sub) {
        case "list": {
          arity(rest, 0, `${group} list`);
          const all = await ctx.api.getAll<Record<string, string>>(path);
          ctx.emit(all, () => all.map((e) => e[field]));
          return;
        }
        case "add":
          arity(rest, 2, `${group} add`);
          await ctx.api.post(path, { [field]: rest[0], password: rest[1] });
          done(ctx);
          return;
        case "update":
          arity(rest, 2, `${group} update`);
          await ctx.api.put(`${path}/${seg(rest[0])}`, { password: rest[1] });
          done(ctx);
          return;
        case "del":
          arity(rest, 1, `${group} del`);
          await ctx.api.delete(`${path}/${seg(rest[0])}`);
          done(ctx);
          return;
        default:
          throw unknownSub(group, sub);
      }
    },
  };
}

export const clientid = entries("clientid", "/auth_clientid", "clientid", "clientid");
export const user = entries("user", "/auth_username", "username", "username");
