// Error answers of the management API (spec 000 §7, emqx-facts §3.1): a proper HTTP status with
// `{code, message}`, where `code` is the family's table (101-116) or, for an unknown object or
// route that no table code names, the HTTP status itself (as the family's rule engine does).
// A 5xx answer carries `{message}` only (spec 000 §7.2: loading a started plugin answers
// `{"message": "already_started"}`). Handlers throw ApiError; app.ts renders it in one place.

import type { ContentfulStatusCode } from "hono/utils/http-status";

export const CODE = {
  badrpc: 101,
  unknown: 102,
  badCredentials: 103,
  emptyCredentials: 104,
  noSuchUser: 105,
  adminUndeletable: 106,
  missingParam: 107,
  badParam: 108,
  notJson: 109,
  pluginLoaded: 110,
  pluginUnloaded: 111,
  clientNotOnline: 112,
  userExists: 113,
  oldPasswordWrong: 114,
  badTopic: 115,
  badQos: 116,
  notFound: 404,
} as const;

export class ApiError extends Error {
  override name = "ApiError";

  constructor(
    readonly status: ContentfulStatusCode,
    readonly code: number,
    message: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }

  /** The JSON body: `{code, message}`, or `{message}` for a 5xx. */
  body(): { code?: number; message: string } {
    return this.status >= 500 ? { message: this.message } : { code: this.code, message: this.message };
  }
}

export const notFound = (what: string): ApiError => new ApiError(404, CODE.notFound, `${what} not found`);
export const nodeNotFound = (node: string): ApiError => new ApiError(404, CODE.notFound, `node not found: ${node}`);
export const missingParam = (name: string): ApiError =>
  new ApiError(400, CODE.missingParam, `missing request parameter: ${name}`);
export const badParam = (message: string): ApiError => new ApiError(400, CODE.badParam, message);
export const clientNotOnline = (clientid: string): ApiError =>
  new ApiError(404, CODE.clientNotOnline, `client not online: ${clientid}`);
/** A node did not answer a call (down, timed out, failed): 500 `{message: "badrpc"}` (code 101). */
export const badRpc = (): ApiError => new ApiError(500, CODE.badrpc, "badrpc");
