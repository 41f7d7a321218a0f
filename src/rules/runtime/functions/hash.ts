// Hash functions (emqx-facts 1.2): md5, sha (SHA-1), sha256 of a string or binary, as
// lower-case hex.

import { createHash } from "node:crypto";
import { argBytes } from "./args.ts";
import { type FnTable, fn } from "./types.ts";

function hash(name: string, algo: string) {
  return fn(1, (a) =>
    createHash(algo)
      .update(argBytes(name, a, 0))
      .digest("hex"),
  );
}

export const hashFunctions: FnTable = {
  md5: hash("md5", "md5"),
  sha: hash("sha", "sha1"),
  sha256: hash("sha256", "sha256"),
};
