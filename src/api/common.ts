// Small helpers the route modules share: node checks and page parameters.

import type { ApiDeps } from "./deps.ts";
import { nodeNotFound } from "./errors.ts";

/** Throws 404 for a node that is not in the cluster. */
export function requireNode(d: ApiDeps, node: string): void {
  if (!d.services.nodes.has(node)) throw nodeNotFound(node);
}

export function pageOf(d: ApiDeps, q: { _page?: number; _limit?: number }): { page: number; limit: number } {
  return { page: q._page ?? 1, limit: q._limit ?? d.maxRowLimit };
}

/** `1234567` -> `"1.18M"`: the family's memory wording (two decimals, K/M/G; bytes below 1K). */
export function withUnit(bytes: number): string {
  const units: [number, string][] = [
    [1024 ** 3, "G"],
    [1024 ** 2, "M"],
    [1024, "K"],
  ];
  for (const [size, unit] of units) if (bytes >= size) return `${(bytes / size).toFixed(2)}${unit}`;
  return String(bytes);
}
