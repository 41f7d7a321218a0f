// V8's own collections on demand: the `gc` function of --expose-gc, exposed to a fresh context
// only, so the node's global scope stays as it was. Made on first use: a process that never asks
// for a collection never sets the flag.

import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";

type GcOptions = { type: "major"; execution: "sync"; flavor: "last-resort" } | { type: "minor" };
type GcFunction = (options: GcOptions) => void;

let gcFunction: GcFunction | undefined;

function gc(): GcFunction {
  if (gcFunction === undefined) {
    setFlagsFromString("--expose-gc");
    gcFunction = runInNewContext("gc") as GcFunction;
  }
  return gcFunction;
}

/** V8's full memory-reducing collection (the one it runs itself under memory pressure). */
export function fullCollection(): void {
  gc()({ type: "major", execution: "sync", flavor: "last-resort" });
}

/** A scavenge of the young generation only (what is still referenced survives, as always). */
export function youngCollection(): void {
  gc()({ type: "minor" });
}
