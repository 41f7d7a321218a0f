// Input handling shared by every route: request bodies are read as JSON whatever Content-Type the
// caller sent (tools such as `curl -d` send form types; the spec says all bodies are JSON), and a
// schema failure becomes the family's code: 107 when a required value is absent, 108 when a value
// has the wrong type or range, 109 when the body is not JSON (emqx-facts §3.1).

import type { Context, MiddlewareHandler } from "hono";
import { bodyLimit } from "hono/body-limit";
import { HTTPException } from "hono/http-exception";
import type { ZodError } from "zod";
import { ApiError, CODE } from "./errors.ts";

const JSON_TYPE = /^application\/([\w.-]+\+)?json(\s*;.*)?$/i;
/** Largest request body read (publish payloads included). */
export const MAX_BODY = 4 * 1024 * 1024;

/** Refuses bodies over MAX_BODY (413) before anything reads them. */
export const limitBody: MiddlewareHandler = bodyLimit({
  maxSize: MAX_BODY,
  onError: () => {
    throw new ApiError(413, CODE.badParam, `request body larger than ${MAX_BODY} bytes`);
  },
});

/** Rewrites a POST/PUT body to `application/json` (an empty body reads as `{}`). */
export const jsonBody: MiddlewareHandler = async (c, next) => {
  const m = c.req.method;
  if (m !== "POST" && m !== "PUT") return next();
  const text = await c.req.raw.text();
  const headers = new Headers(c.req.raw.headers);
  if (!JSON_TYPE.test(c.req.header("content-type") ?? "")) headers.set("content-type", "application/json");
  headers.delete("content-length");
  headers.delete("transfer-encoding");
  c.req.raw = new Request(c.req.raw.url, { method: m, headers, body: text.trim() === "" ? "{}" : text });
  return next();
};

type HookResult = { success: true; data: unknown } | { success: false; error: ZodError; data?: unknown };

/** zod-openapi's defaultHook: throws the family's error for a failed validation. */
export function validationHook(result: HookResult & { target: string }, _c: Context): undefined {
  if (result.success) return undefined;
  throw validationError(result.error, result.data, result.target);
}

type Issue = ZodError["issues"][number];

/**
 * The issue to report. For a union (a body that is one object or an array of them) it is the
 * first issue of the branch the input has the shape of (no type error at that branch's root).
 */
function reportedIssue(issue: Issue): Issue {
  if (issue.code !== "invalid_union") return issue;
  const branches = (issue.errors as Issue[][]).filter((b) => b.length > 0);
  const best = branches.find((b) => !b.some((i) => i.code === "invalid_type" && i.path.length === 0)) ?? branches[0];
  if (best === undefined) return issue;
  return reportedIssue({ ...best[0], path: [...issue.path, ...best[0].path] } as Issue);
}

export function validationError(error: ZodError, data: unknown, target: string): ApiError {
  const issue = reportedIssue(error.issues[0]);
  const path = issue.path.map(String);
  const where = path.length === 0 ? (target === "json" ? "body" : target) : path.join(".");
  if (path.length > 0 && valueAt(data, path) === undefined)
    return new ApiError(400, CODE.missingParam, `missing request parameter: ${where}`);
  return new ApiError(400, CODE.badParam, `bad request parameter ${where}: ${issue.message}`);
}

function valueAt(data: unknown, path: string[]): unknown {
  let v = data;
  for (const k of path) {
    if (v === null || typeof v !== "object") return undefined;
    v = (v as Record<string, unknown>)[k];
  }
  return v;
}

/** Maps what Hono and its validators throw to ApiErrors (others stay unknown: a 500). */
export function toApiError(err: unknown): ApiError | undefined {
  if (err instanceof ApiError) return err;
  if (err instanceof HTTPException) {
    if (/JSON/i.test(err.message)) return new ApiError(400, CODE.notJson, "request body is not JSON");
    if (err.status === 415) return new ApiError(400, CODE.notJson, "request body is not JSON");
    if (err.status < 500) return new ApiError(err.status as 400, CODE.badParam, err.message || "bad request");
  }
  return undefined;
}
