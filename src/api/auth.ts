// HTTP Basic authentication of the management API (spec 000 §5, spec 001 §5): v3/v4 check an
// application's AppID/AppSecret, v2 a dashboard user. A request without usable credentials gets
// 401 + `WWW-Authenticate: Basic` + code 104; wrong credentials get 401 + code 103, with one message
// whether or not the id exists. A failing credential store answers 503, never 500.

import type { MiddlewareHandler } from "hono";
import { ApiError, CODE } from "./errors.ts";

/** Checks a pair; resolves false for an unknown id or a wrong secret alike. */
export type CredentialCheck = (id: string, secret: string) => Promise<boolean>;

export const CHALLENGE = { "WWW-Authenticate": 'Basic realm="svc"' };

export const emptyCredentials = (): ApiError =>
  new ApiError(401, CODE.emptyCredentials, "empty username or password", CHALLENGE);
export const badCredentials = (): ApiError =>
  new ApiError(401, CODE.badCredentials, "username or password error", CHALLENGE);

/** Splits an `Authorization: Basic ...` header; undefined when absent, malformed or empty. */
export function parseBasic(header: string | undefined): { id: string; secret: string } | undefined {
  if (header === undefined) return undefined;
  const m = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (m === null) return undefined;
  const text = Buffer.from(m[1], "base64").toString("utf8");
  const i = text.indexOf(":");
  if (i <= 0 || i === text.length - 1) return undefined;
  return { id: text.slice(0, i), secret: text.slice(i + 1) };
}

export function basicAuth(check: CredentialCheck, onStoreError: (err: unknown) => void): MiddlewareHandler {
  return async (c, next) => {
    const cred = parseBasic(c.req.header("authorization"));
    if (cred === undefined) throw emptyCredentials();
    let ok: boolean;
    try {
      ok = await check(cred.id, cred.secret);
    } catch (err) {
      onStoreError(err);
      throw new ApiError(503, CODE.unknown, "credential store unavailable");
    }
    if (!ok) throw badCredentials();
    await next();
  };
}
