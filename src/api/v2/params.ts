// Path parameters and paging of the v2 API (spec 001 §4): `{node_name}`, `{client_id}`,
// `curr_page` / `page_size`.

import { z } from "@hono/zod-openapi";
import type { ApiDeps } from "../deps.ts";

const pathParam = (name: string, description: string) =>
  z
    .string()
    .min(1)
    .openapi({ param: { name, in: "path" }, description });

export const NodeNameParam = z.object({ node_name: pathParam("node_name", "Node name") });
export const ClientIdParam = z.object({ client_id: pathParam("client_id", "Client id") });
export const NodeClientIdParam = NodeNameParam.extend(ClientIdParam.shape);

export function v2PageOf(d: ApiDeps, q: { curr_page?: number; page_size?: number }): [number, number] {
  return [q.curr_page ?? 1, q.page_size ?? d.maxRowLimit];
}

/** The rows a v2 page covers. */
export const v2WindowOf = (page: number, size: number): { start: number; limit: number } => ({
  start: (page - 1) * size,
  limit: size,
});

/** Absent values appear as the text `undefined` (spec 001 §2). */
export const orUndefined = (s: string): string => (s === "" ? "undefined" : s);
