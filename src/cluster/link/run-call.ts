// Answering a call from another node: runs the handler, then replies with its JSON value, or with
// `{message, code?}` when it threw or its value is not JSON-able.

import { ReplyStatus } from "./protocol.ts";

export function runCall(
  onCall: (from: string, method: string, args: unknown) => Promise<unknown>,
  from: string,
  method: string,
  args: unknown,
  reply: (status: number, json: string) => void,
): void {
  const fail = (err: unknown): void => {
    const e = err as { message?: unknown; code?: unknown };
    const body: { message: string; code?: string } = { message: String(e?.message ?? err) };
    if (typeof e?.code === "string") body.code = e.code;
    reply(ReplyStatus.error, JSON.stringify(body));
  };
  Promise.resolve()
    .then(() => onCall(from, method, args))
    .then((value) => {
      let json: string;
      try {
        json = JSON.stringify(value === undefined ? null : value) ?? "null";
      } catch (err) {
        fail(new Error(`reply of ${method} is not JSON-able: ${(err as Error).message}`));
        return;
      }
      reply(ReplyStatus.ok, json);
    }, fail);
}
