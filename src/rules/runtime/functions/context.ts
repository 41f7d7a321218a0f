// Context functions (emqx-facts 1.2): read the event being evaluated (its columns and the
// aliases selected so far). msgid() (column id), qos(), flags() ({} when absent), flag(name),
// topic(), topic(n) (the n-th level, 1-based; undefined past the end), clientid() (clientid,
// client_id or from), clientip() / peerhost() (peerhost, or the host part of peername),
// username(), payload(), payload(path) ("a.b", into the JSON-decoded payload), null(); and the
// 3.x ones: peername(), timestamp(), headers(), header(name).

import { getPath } from "../paths.ts";
import { getOwn, isMap, isNull, textOf } from "../values.ts";
import { argInt, argStr } from "./args.ts";
import { envFn, type FnEnv, type FnTable, fn } from "./types.ts";

function first(env: FnEnv, ...names: string[]): unknown {
  for (const n of names) {
    const v = env.get(n);
    if (!isNull(v)) return v;
  }
  return undefined;
}

function peerhost(env: FnEnv): unknown {
  const h = env.get("peerhost");
  if (!isNull(h)) return h;
  const p = textOf(env.get("peername"));
  if (p === null) return undefined;
  const i = p.lastIndexOf(":");
  const host = i < 0 ? p : p.slice(0, i);
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

export const contextFunctions: FnTable = {
  msgid: envFn(0, (_a, env) => env.get("id")),
  qos: envFn(0, (_a, env) => env.get("qos")),
  flags: envFn(0, (_a, env) => {
    const f = env.get("flags");
    return isNull(f) ? {} : f;
  }),
  flag: envFn(1, (a, env) => {
    const f = env.get("flags");
    return isMap(f) ? getOwn(f, argStr("flag", a, 0)) : undefined;
  }),
  topic: envFn([0, 1], (a, env) => {
    const t = env.get("topic");
    if (a.length === 0) return t;
    const n = argInt("topic", a, 0);
    const s = textOf(t);
    if (s === null || n < 1) return undefined;
    return s.split("/")[n - 1];
  }),
  clientid: envFn(0, (_a, env) => first(env, "clientid", "client_id", "from")),
  clientip: envFn(0, (_a, env) => peerhost(env)),
  peerhost: envFn(0, (_a, env) => peerhost(env)),
  username: envFn(0, (_a, env) => env.get("username")),
  payload: envFn([0, 1], (a, env) => {
    if (a.length === 0) return env.get("payload");
    return getPath(env.payload(), argStr("payload", a, 0).split("."));
  }),
  null: fn(0, () => undefined),
  peername: envFn(0, (_a, env) => env.get("peername")),
  timestamp: envFn(0, (_a, env) => env.get("timestamp")),
  headers: envFn(0, (_a, env) => env.get("headers")),
  header: envFn(1, (a, env) => {
    const h = env.get("headers");
    return isMap(h) ? getOwn(h, argStr("header", a, 0)) : undefined;
  }),
};
