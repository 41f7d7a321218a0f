// svc's own log-level and message-trace routes (the CLI's `log primary-level <level>` and `trace
// start|list|stop`). They act on the node that answers: its log level, its traces and trace files.

import { z } from "@hono/zod-openapi";
import type { TraceOutcome } from "../../services/trace.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, badParam, CODE, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope } from "../schemas.ts";

const Level = z.object({ level: z.string() }).openapi("LogLevel");
const TraceType = z.enum(["client", "topic"]);
const Trace = z
  .object({
    type: TraceType,
    name: z.string().openapi({ description: "Client id or topic filter" }),
    file: z.string(),
    level: z.string(),
    started_at: z.string(),
  })
  .openapi("Trace");
const NewTrace = z
  .object({
    type: TraceType,
    name: z.string().min(1).openapi({ description: "Client id or topic filter" }),
    file: z.string().min(1).openapi({ description: "Trace file, on the node" }),
    level: z.string().optional().openapi({ description: "Default debug" }),
  })
  .openapi("NewTrace");
const TraceParam = z.object({
  type: z.string().openapi({ param: { name: "type", in: "path" }, description: "client or topic" }),
  name: z
    .string()
    .min(1)
    .openapi({ param: { name: "name", in: "path" }, description: "Client id or topic filter, URL-encoded" }),
});

function check(out: TraceOutcome): void {
  if (out.ok) return;
  if (out.error === "not_found") throw notFound(out.message);
  if (out.error === "already_traced") throw new ApiError(409, CODE.badParam, out.message);
  throw badParam(out.message);
}

export function observabilityRoutes(t: RouteTable, d: ApiDeps): void {
  const { log, trace } = d.services;

  t.add(
    {
      name: "get_log_level",
      method: "get",
      path: "/log/primary_level",
      descr: "The node's log level (svc)",
      tag: "log",
      response: envelope(Level),
    },
    () => ok({ level: log.getLogLevel() }),
  );

  t.add(
    {
      name: "set_log_level",
      method: "put",
      path: "/log/primary_level",
      descr: "Set the node's log level (svc)",
      tag: "log",
      body: Level,
      response: envelope(Level),
    },
    ({ body }) => {
      const out = log.setLogLevel(body.level);
      if (!out.ok) throw badParam(out.message);
      return ok({ level: out.level });
    },
  );

  t.add(
    {
      name: "list_traces",
      method: "get",
      path: "/traces",
      descr: "Message traces running on the node (svc)",
      tag: "trace",
      response: envelope(z.array(Trace)),
    },
    () => ok(trace.list()),
  );

  t.add(
    {
      name: "start_trace",
      method: "post",
      path: "/traces",
      descr: "Trace a client's or a topic filter's messages to a file on the node (svc)",
      tag: "trace",
      body: NewTrace,
      response: Done,
    },
    ({ body }) => {
      const level = body.level ?? "debug";
      check(
        body.type === "client"
          ? trace.startClient(body.name, body.file, level)
          : trace.startTopic(body.name, body.file, level),
      );
      return ok();
    },
  );

  t.add(
    {
      name: "stop_trace",
      method: "delete",
      path: "/traces/{type}/{name}",
      descr: "Stop a message trace (svc)",
      tag: "trace",
      params: TraceParam,
      response: Done,
    },
    async ({ params }) => {
      if (params.type === "client") check(await trace.stopClient(params.name));
      else if (params.type === "topic") check(await trace.stopTopic(params.name));
      else throw badParam("type must be client or topic");
      return ok();
    },
  );
}
