// svc's `/bridges` routes (the CLI's `bridges list|start|stop|forwards|add-forward|del-forward|
// subscriptions|add-subscription|del-subscription`). They act on the node that answers: its own
// bridges, none while the bridge plugin (svc_bridge_mqtt) is not loaded. Start, stop and the
// changes of forwards and subscriptions answer `{changed}`: false when there was nothing to do.

import { z } from "@hono/zod-openapi";
import type { BridgeOutcome } from "../../services/bridges.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, badParam, CODE, notFound } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { envelope } from "../schemas.ts";

const int = () => z.number().int();

const BridgeSubscription = z
  .object({
    topic: z.string().openapi({ description: "Remote topic filter" }),
    qos: int().openapi({ description: "0, 1 or 2" }),
  })
  .openapi("BridgeSubscription");

const Bridge = z
  .object({
    name: z.string(),
    kind: z.enum(["mqtt", "rpc"]),
    address: z.string().openapi({ description: "host:port (MQTT) or a node name (RPC)" }),
    status: z.enum(["Running", "Connecting", "Stopped"]),
    forwards: z.array(z.string()).openapi({ description: "Local topic filters forwarded" }),
    subscriptions: z.array(BridgeSubscription),
    queued: int().openapi({ description: "Messages cached and not yet sent" }),
    inflight: int().openapi({ description: "Messages sent and not yet acknowledged" }),
    forwarded: int().openapi({ description: "Messages the other side acknowledged" }),
    received: int().openapi({ description: "Messages of remote subscriptions published here" }),
    dropped: int().openapi({ description: "Messages dropped because the cache was full" }),
    refused: int().openapi({ description: "Messages the remote broker refused" }),
  })
  .openapi("Bridge");

const Changed = z
  .object({ changed: z.boolean().openapi({ description: "false: it was so already" }) })
  .openapi("BridgeChanged");

const nameParam = z
  .string()
  .min(1)
  .openapi({ param: { name: "name", in: "path" }, description: "Bridge name" });
const topicParam = z
  .string()
  .min(1)
  .openapi({ param: { name: "topic", in: "path" }, description: "Topic filter, URL-encoded" });
const NameParam = z.object({ name: nameParam });
const NameTopicParam = z.object({ name: nameParam, topic: topicParam });

const NewForward = z
  .object({ topic: z.string().min(1).openapi({ description: "Local topic filter to forward" }) })
  .openapi("NewBridgeForward");
const NewSubscription = z
  .object({
    topic: z.string().min(1).openapi({ description: "Remote topic filter to subscribe to" }),
    qos: z.number().openapi({ description: "0, 1 or 2" }),
  })
  .openapi("NewBridgeSubscription");

/** The `{changed}` data of an outcome, or the error it is. */
function changed(name: string, out: BridgeOutcome): { code: 0; data: { changed: boolean } } {
  if (out.ok) return ok({ changed: out.changed });
  if (out.error === "not_found") throw notFound(`bridge ${name}`);
  if (out.error === "bad_filter") throw new ApiError(400, CODE.badTopic, out.message);
  if (out.error === "bad_qos") throw new ApiError(400, CODE.badQos, out.message);
  throw badParam(out.message);
}

function found<T>(name: string, v: T | undefined): T {
  if (v === undefined) throw notFound(`bridge ${name}`);
  return v;
}

export function bridgeRoutes(t: RouteTable, d: ApiDeps): void {
  const { bridges } = d.services;

  t.add(
    {
      name: "list_bridges",
      method: "get",
      path: "/bridges",
      descr: "Bridges of the node, with their status and counters (svc)",
      tag: "bridges",
      response: envelope(z.array(Bridge)),
    },
    () => ok(bridges.list()),
  );

  t.add(
    {
      name: "lookup_bridge",
      method: "get",
      path: "/bridges/{name}",
      descr: "A bridge of the node (svc)",
      tag: "bridges",
      params: NameParam,
      response: envelope(Bridge),
    },
    ({ params }) => ok(found(params.name, bridges.get(params.name))),
  );

  t.add(
    {
      name: "start_bridge",
      method: "put",
      path: "/bridges/{name}/start",
      descr: "Start a bridge; changed is false when it was started already (svc)",
      tag: "bridges",
      params: NameParam,
      response: envelope(Changed),
    },
    ({ params }) => changed(params.name, bridges.start(params.name)),
  );

  t.add(
    {
      name: "stop_bridge",
      method: "put",
      path: "/bridges/{name}/stop",
      descr: "Stop a bridge; changed is false when it was stopped already (svc)",
      tag: "bridges",
      params: NameParam,
      response: envelope(Changed),
    },
    async ({ params }) => changed(params.name, await bridges.stop(params.name)),
  );

  t.add(
    {
      name: "list_bridge_forwards",
      method: "get",
      path: "/bridges/{name}/forwards",
      descr: "Local topic filters a bridge forwards (svc)",
      tag: "bridges",
      params: NameParam,
      response: envelope(z.array(z.string())),
    },
    ({ params }) => ok(found(params.name, bridges.forwards(params.name))),
  );

  t.add(
    {
      name: "add_bridge_forward",
      method: "post",
      path: "/bridges/{name}/forwards",
      descr: "Forward a local topic filter through a bridge (svc)",
      tag: "bridges",
      params: NameParam,
      body: NewForward,
      response: envelope(Changed),
    },
    ({ params, body }) => changed(params.name, bridges.addForward(params.name, body.topic)),
  );

  t.add(
    {
      name: "del_bridge_forward",
      method: "delete",
      path: "/bridges/{name}/forwards/{topic}",
      descr: "Stop forwarding a local topic filter through a bridge (svc)",
      tag: "bridges",
      params: NameTopicParam,
      response: envelope(Changed),
    },
    ({ params }) => changed(params.name, bridges.delForward(params.name, params.topic)),
  );

  t.add(
    {
      name: "list_bridge_subscriptions",
      method: "get",
      path: "/bridges/{name}/subscriptions",
      descr: "Remote topic filters a bridge subscribes to (svc)",
      tag: "bridges",
      params: NameParam,
      response: envelope(z.array(BridgeSubscription)),
    },
    ({ params }) => ok(found(params.name, bridges.subscriptions(params.name))),
  );

  t.add(
    {
      name: "add_bridge_subscription",
      method: "post",
      path: "/bridges/{name}/subscriptions",
      descr: "Subscribe an MQTT bridge to a remote topic filter (svc)",
      tag: "bridges",
      params: NameParam,
      body: NewSubscription,
      response: envelope(Changed),
    },
    ({ params, body }) => changed(params.name, bridges.addSubscription(params.name, body.topic, body.qos)),
  );

  t.add(
    {
      name: "del_bridge_subscription",
      method: "delete",
      path: "/bridges/{name}/subscriptions/{topic}",
      descr: "Unsubscribe a bridge from a remote topic filter (svc)",
      tag: "bridges",
      params: NameTopicParam,
      response: envelope(Changed),
    },
    ({ params }) => changed(params.name, bridges.delSubscription(params.name, params.topic)),
  );
}
