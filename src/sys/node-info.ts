// What the node says about itself on $SYS and in the node views: version (from package.json, read
// once), description, uptime text since the broker started, and the local date and time.

import { readFileSync } from "node:fs";
import { formatDatetime, formatUptime } from "./format.ts";

/** The family's `sysdescr` (EMQX there). */
export const SYSDESCR = "svc";

function readVersion(): string {
  try {
    // src/sys/ and dist/sys/ are both two levels below the package root.
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

export const VERSION = readVersion();

export interface NodeInfo {
  version: string;
  sysdescr: string;
  uptime: string;
  datetime: string;
}

export function nodeInfo(startedAt: number, now = Date.now()): NodeInfo {
  return { version: VERSION, sysdescr: SYSDESCR, uptime: formatUptime(now - startedAt), datetime: formatDatetime(now) };
}
