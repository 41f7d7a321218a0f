// `data export` (a backup file on the node) and `data import <File>`: a file readable here is
// sent as the document; otherwise `<File>` names a backup file on the node.

import { existsSync, readFileSync } from "node:fs";
import type { BackupFile } from "../api-types.ts";
import { arity, type CommandGroup, unknownSub } from "../command.ts";
import { CliError } from "../errors.ts";

export const data: CommandGroup = {
  name: "data",
  usage: [
    ["data import <File>", "Import data from the specified file"],
    ["data export", "Export data"],
  ],
  async run(ctx, args) {
    const [sub, ...rest] = args;
    switch (sub) {
      case "export": {
        arity(rest, 0, "data export");
        const f = await ctx.api.post<BackupFile>("/data/export");
        ctx.emit(f, () => [`The data has been successfully exported to ${f.filename} on ${f.node}.`]);
        return;
      }
      case "import": {
        arity(rest, 1, "data import");
        const file = rest[0];
        let body: unknown = { filename: file };
        if (existsSync(file)) {
          try {
            body = JSON.parse(readFileSync(file, "utf8"));
          } catch (err) {
            throw new CliError(`The data import failed: ${file}: ${(err as Error).message}`);
          }
        }
        const counts = await ctx.api.post<Record<string, number>>("/data/import", body);
        ctx.emit(counts, () => ["The data has been imported successfully."]);
        return;
      }
      default:
        throw unknownSub("data", sub);
    }
  },
};
