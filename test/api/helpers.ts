// Shared fixtures of the API tests: requests in-process through the node's Hono app
// (`app.request()`), or over real HTTP to a management port, with Basic credentials (the default
// application and dashboard user, admin/public, unless told otherwise), and checks of an object's
// exact field set and JSON types against a spec table.

import { expect } from "vitest";
import type { TestNode } from "../helpers/node.ts";

export { connect, offline, persistent, uid, useNode, waitUntil } from "../conformance/helpers.ts";

export type JsonType = "string" | "int" | "number" | "boolean" | "array" | "object" | "null";

// biome-ignore lint/suspicious/noExplicitAny: JSON answers, checked field by field by the tests
export interface Answer<T = any> {
  status: number;
  headers: Headers;
  body: T;
  text: string;
}

export interface ReqOptions {
  body?: unknown;
  /** Raw body text (sent as is). */
  raw?: string;
  /** `[id, secret]`, `null` for none; default admin/public. */
  auth?: [string, string] | null;
  headers?: Record<string, string>;
}

export function basic(id: string, secret: string): string {
  return `Basic ${Buffer.from(`${id}:${secret}`).toString("base64")}`;
}

function init(method: string, o: ReqOptions): RequestInit {
  const headers: Record<string, string> = { ...o.headers };
  const auth = o.auth === undefined ? (["admin", "public"] as [string, string]) : o.auth;
  if (auth !== null) headers.authorization = basic(auth[0], auth[1]);
  let body: string | undefined;
  if (o.raw !== undefined) body = o.raw;
  else if (o.body !== undefined) {
    body = JSON.stringify(o.body);
    headers["content-type"] ??= "application/json";
  }
  return { method, headers, body };
}

async function answer(res: Response): Promise<Answer> {
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = undefined;
  }
  return { status: res.status, headers: res.headers, body, text };
}

/** In-process: the node's Hono app answers without a socket. */
export async function req(node: TestNode, method: string, path: string, o: ReqOptions = {}): Promise<Answer> {
  return answer(await node.api.app.request(path, init(method, o)));
}

/** Over real HTTP to one of the node's management listeners. */
export async function http(
  node: TestNode,
  port: "http" | "http_v2",
  method: string,
  path: string,
  o: ReqOptions = {},
): Promise<Answer> {
  const p = node.managementPort(port);
  if (p === undefined) throw new Error(`management listener ${port} is off`);
  return answer(await fetch(`http://127.0.0.1:${p}${path}`, init(method, o)));
}

function typeOf(v: unknown): JsonType {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "int" : "number";
  return typeof v as JsonType;
}

/** `obj` has exactly the fields of `shape`, each of its JSON type. */
export function expectShape(obj: unknown, shape: Record<string, JsonType | JsonType[]>, what = "object"): void {
  expect(typeOf(obj), what).toBe("object");
  const o = obj as Record<string, unknown>;
  expect(Object.keys(o).sort(), `${what} fields`).toEqual(Object.keys(shape).sort());
  for (const [k, t] of Object.entries(shape)) {
    const allowed = Array.isArray(t) ? t : [t];
    expect(allowed, `${what}.${k} is ${JSON.stringify(o[k])}`).toContain(typeOf(o[k]));
  }
}

/** A v3 error answer: HTTP status and `{code, message}`. */
export function expectError(a: Answer, status: number, code: number): void {
  expect({ status: a.status, code: a.body?.code }, a.text).toEqual({ status, code });
  expect(typeof a.body.message).toBe("string");
}
