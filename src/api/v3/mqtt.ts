// `POST /mqtt/publish|subscribe|unsubscribe` and their `_batch` forms (spec 000 §4, bodies per
// emqx-facts §3.4): `topic` or `topics` (comma list), `payload` (a JSON object is sent as its JSON
// text), `encoding` plain|base64, `qos` (default 0), `retain` (default false), `clientid` or
// `client_id` (publish: default `http`, spec 001 §4), MQTT 5.0 `properties` and `user_properties`.
// A batch body is an array of single bodies; each item answers its own code.

import { z } from "@hono/zod-openapi";
import { NodeCallError } from "../../services/cluster-calls.ts";
import type { PublishError, PublishProperties } from "../../services/publish.ts";
import type { SubscribeOutcome } from "../../services/subscriptions.ts";
import type { ApiDeps } from "../deps.ts";
import { ok } from "../envelope.ts";
import { ApiError, CODE, missingParam } from "../errors.ts";
import type { RouteTable } from "../route-table.ts";
import { Done, envelope } from "../schemas.ts";

/** The publisher id of messages published over HTTP without one. */
export const DEFAULT_PUBLISHER = "http";

export const PublishPropsBody = z
  .object({
    payload_format_indicator: z.union([z.number().int().min(0).max(1), z.boolean()]).optional(),
    message_expiry_interval: z.number().int().min(0).optional(),
    response_topic: z.string().optional(),
    correlation_data: z.string().optional(),
    content_type: z.string().optional(),
    user_properties: z.record(z.string(), z.union([z.string(), z.array(z.string())])).optional(),
    subscription_identifier: z.number().int().optional().openapi({ description: "Ignored: set per subscriber" }),
  })
  .openapi("PublishProperties");

export const PublishBody = z
  .object({
    topic: z.string().optional(),
    topics: z.string().optional().openapi({ description: "Comma-separated topics; one message each" }),
    payload: z.union([z.string(), z.record(z.string(), z.unknown()), z.array(z.unknown())]).optional(),
    encoding: z.enum(["plain", "base64"]).optional(),
    qos: z.number().optional().openapi({ description: "0, 1 or 2 (default 0)" }),
    retain: z.boolean().optional(),
    clientid: z.string().optional(),
    client_id: z.string().optional(),
    properties: PublishPropsBody.optional(),
    user_properties: z.record(z.string(), z.string()).optional(),
  })
  .openapi("PublishBody");

export const SubscribeBody = z
  .object({
    topic: z.string().optional(),
    topics: z.string().optional(),
    qos: z.number().optional(),
    clientid: z.string().optional(),
    client_id: z.string().optional(),
  })
  .openapi("SubscribeBody");

export const UnsubscribeBody = z
  .object({ topic: z.string().optional(), clientid: z.string().optional(), client_id: z.string().optional() })
  .openapi("UnsubscribeBody");

export type PublishInput = z.output<typeof PublishBody>;
type SubscribeInput = z.output<typeof SubscribeBody>;
type UnsubscribeInput = z.output<typeof UnsubscribeBody>;

const PUBLISH_ERRORS: Record<PublishError, () => ApiError> = {
  bad_topic: () => new ApiError(400, CODE.badTopic, "bad topic"),
  bad_qos: () => new ApiError(400, CODE.badQos, "bad QoS: must be 0, 1 or 2"),
  bad_payload: () => new ApiError(400, CODE.badParam, "payload is not base64"),
};

const SUBSCRIBE_ERRORS: Record<Exclude<SubscribeOutcome, "ok">, (clientid: string) => ApiError> = {
  client_not_online: (id) => new ApiError(404, CODE.clientNotOnline, `client not online: ${id}`),
  bad_topic: () => new ApiError(400, CODE.badTopic, "bad topic"),
  bad_qos: () => new ApiError(400, CODE.badQos, "bad QoS: must be 0, 1 or 2"),
};

function topicsOf(b: { topic?: string; topics?: string }): string[] {
  if (b.topics !== undefined) return b.topics.split(",").map((s) => s.trim());
  if (b.topic !== undefined) return [b.topic];
  throw missingParam("topic");
}

/** Publishes one body (one message per topic); throws the ApiError of a refused body. */
export function publishOne(d: ApiDeps, b: PublishInput, defaultPublisher = DEFAULT_PUBLISHER): void {
  const topics = topicsOf(b);
  const payload = b.payload === undefined || typeof b.payload === "string" ? b.payload : JSON.stringify(b.payload);
  let props: PublishProperties | undefined;
  if (b.properties !== undefined || b.user_properties !== undefined) {
    const { subscription_identifier: _, ...p } = b.properties ?? {};
    props = { ...p };
    if (b.user_properties !== undefined) props.user_properties = { ...p.user_properties, ...b.user_properties };
  }
  const out = d.services.publish.publishTopics(topics, {
    payload,
    encoding: b.encoding,
    qos: b.qos,
    retain: b.retain,
    clientid: b.clientid ?? b.client_id ?? defaultPublisher,
    apiProperties: props,
  });
  if (!out.ok) throw PUBLISH_ERRORS[out.error]();
}

function clientOf(b: { clientid?: string; client_id?: string }): string {
  const id = b.clientid ?? b.client_id;
  if (id === undefined || id === "") throw missingParam("clientid");
  return id;
}

/** Subscribes the client on whichever node holds its session. */
export async function subscribeOne(d: ApiDeps, b: SubscribeInput): Promise<void> {
  const clientid = clientOf(b);
  for (const topic of topicsOf(b)) {
    const out = await d.services.subscriptions.subscribeAnywhere(clientid, topic, b.qos ?? 0);
    if (out !== "ok") throw SUBSCRIBE_ERRORS[out](clientid);
  }
}

/** Unsubscribes the client on whichever node holds its session. */
export async function unsubscribeOne(d: ApiDeps, b: UnsubscribeInput): Promise<void> {
  const clientid = clientOf(b);
  for (const topic of topicsOf(b)) {
    const out = await d.services.subscriptions.unsubscribeAnywhere(clientid, topic);
    if (out !== "ok") throw SUBSCRIBE_ERRORS[out](clientid);
  }
}

/** An item's code in a batch answer: 0, or the code its single form would answer. */
async function codeOf(fn: () => void | Promise<void>): Promise<number> {
  try {
    await fn();
    return 0;
  } catch (err) {
    if (err instanceof ApiError) return err.code;
    if (err instanceof NodeCallError) return CODE.badrpc;
    throw err;
  }
}

const BatchResult = z.object({ topic: z.string(), code: z.number().int() });
const ClientBatchResult = BatchResult.extend({ clientid: z.string() });

export function mqttRoutes(t: RouteTable, d: ApiDeps): void {
  const tag = "mqtt";

  t.add(
    {
      name: "mqtt_publish",
      method: "post",
      path: "/mqtt/publish",
      descr: "Publish a MQTT message",
      tag,
      body: PublishBody,
      response: Done,
    },
    ({ body }) => {
      publishOne(d, body);
      return ok();
    },
  );

  t.add(
    {
      name: "mqtt_subscribe",
      method: "post",
      path: "/mqtt/subscribe",
      descr: "Subscribe a topic for a connected client",
      tag,
      body: SubscribeBody,
      response: Done,
    },
    async ({ body }) => {
      await subscribeOne(d, body);
      return ok();
    },
  );

  t.add(
    {
      name: "mqtt_unsubscribe",
      method: "post",
      path: "/mqtt/unsubscribe",
      descr: "Unsubscribe a topic for a connected client",
      tag,
      body: UnsubscribeBody,
      response: Done,
    },
    async ({ body }) => {
      await unsubscribeOne(d, body);
      return ok();
    },
  );

  t.add(
    {
      name: "mqtt_publish_batch",
      method: "post",
      path: "/mqtt/publish_batch",
      descr: "Publish MQTT messages in a batch",
      tag,
      body: z.array(PublishBody),
      response: envelope(z.array(BatchResult)),
    },
    async ({ body }) => {
      const out: { topic: string; code: number }[] = [];
      for (const b of body) out.push({ topic: b.topics ?? b.topic ?? "", code: await codeOf(() => publishOne(d, b)) });
      return ok(out);
    },
  );

  t.add(
    {
      name: "mqtt_subscribe_batch",
      method: "post",
      path: "/mqtt/subscribe_batch",
      descr: "Subscribe topics for connected clients in a batch",
      tag,
      body: z.array(SubscribeBody),
      response: envelope(z.array(ClientBatchResult)),
    },
    async ({ body }) => {
      const out: { clientid: string; topic: string; code: number }[] = [];
      for (const b of body)
        out.push({
          clientid: b.clientid ?? b.client_id ?? "",
          topic: b.topics ?? b.topic ?? "",
          code: await codeOf(() => subscribeOne(d, b)),
        });
      return ok(out);
    },
  );

  t.add(
    {
      name: "mqtt_unsubscribe_batch",
      method: "post",
      path: "/mqtt/unsubscribe_batch",
      descr: "Unsubscribe topics for connected clients in a batch",
      tag,
      body: z.array(UnsubscribeBody),
      response: envelope(z.array(ClientBatchResult)),
    },
    async ({ body }) => {
      const out: { clientid: string; topic: string; code: number }[] = [];
      for (const b of body)
        out.push({
          clientid: b.clientid ?? b.client_id ?? "",
          topic: b.topic ?? "",
          code: await codeOf(() => unsubscribeOne(d, b)),
        });
      return ok(out);
    },
  );
}
