// Publishing on behalf of the management API and CLI: validates the topic and QoS, builds the
// message (payload plain or base64, MQTT 5.0 properties under their API names) and hands it to
// the broker like any client's. `publishTopics` is the API's `topics` form (emqx-facts §3.4): one
// message per topic, invalid names dropped, bad_topic when none is left.

import type { Broker } from "../broker/broker.ts";
import { type MessageProps, makeMessage, type QoS } from "../broker/types.ts";
import { validateTopicName } from "../mqtt/topic.ts";

/** MQTT 5.0 PUBLISH properties as the API names them (emqx-facts §3.4). */
export interface PublishProperties {
  payload_format_indicator?: number | boolean;
  message_expiry_interval?: number;
  response_topic?: string;
  correlation_data?: string;
  content_type?: string;
  user_properties?: Record<string, string | string[]>;
}

export interface PublishRequest {
  topic: string;
  payload?: string;
  encoding?: "plain" | "base64";
  qos?: number;
  retain?: boolean;
  clientid?: string;
  /** Core property names (internal callers). */
  properties?: MessageProps;
  /** API property names; merged over `properties`. */
  apiProperties?: PublishProperties;
}

export type PublishError = "bad_topic" | "bad_qos" | "bad_payload";

export type PublishOutcome = { ok: true; deliveries: number; msgid: string } | { ok: false; error: PublishError };

export type PublishManyOutcome =
  | { ok: true; deliveries: number; msgids: string[]; topics: string[] }
  | { ok: false; error: PublishError };

export class PublishService {
  constructor(private readonly broker: Broker) {}

  publish(r: PublishRequest): PublishOutcome {
    const out = this.publishTopics([r.topic], r);
    if (!out.ok) return out;
    return { ok: true, deliveries: out.deliveries, msgid: out.msgids[0] };
  }

  /** One message per valid topic name of `topics`; bad_topic when none is valid. */
  publishTopics(topics: readonly string[], r: Omit<PublishRequest, "topic">): PublishManyOutcome {
    const qos = r.qos ?? 0;
    if (qos !== 0 && qos !== 1 && qos !== 2) return { ok: false, error: "bad_qos" };
    const maxLevels = this.broker.zone("external").maxTopicLevels;
    const valid = topics.filter((t) => validateTopicName(t, maxLevels));
    if (valid.length === 0) return { ok: false, error: "bad_topic" };
    const rt = r.apiProperties?.response_topic;
    if (rt !== undefined && !validateTopicName(rt, maxLevels)) return { ok: false, error: "bad_topic" };
    let payload: Buffer;
    if (r.encoding === "base64") {
      const text = r.payload ?? "";
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return { ok: false, error: "bad_payload" };
      payload = Buffer.from(text, "base64");
    } else payload = Buffer.from(r.payload ?? "", "utf8");
    const properties = mergeProps(r.properties, r.apiProperties);
    let deliveries = 0;
    const msgids: string[] = [];
    for (const topic of valid) {
      const msg = makeMessage({
        from: r.clientid ?? "",
        topic,
        payload,
        qos: qos as QoS,
        retain: r.retain === true,
        properties,
      });
      deliveries += this.broker.publish(msg);
      msgids.push(String(msg.seq));
    }
    return { ok: true, deliveries, msgids, topics: valid };
  }
}

function mergeProps(core: MessageProps | undefined, api: PublishProperties | undefined): MessageProps | undefined {
  if (api === undefined) return core;
  const p: MessageProps = { ...core };
  if (api.payload_format_indicator !== undefined)
    p.payloadFormatIndicator = api.payload_format_indicator === true || api.payload_format_indicator === 1;
  if (api.message_expiry_interval !== undefined) p.messageExpiryInterval = api.message_expiry_interval;
  if (api.response_topic !== undefined) p.responseTopic = api.response_topic;
  if (api.correlation_data !== undefined) p.correlationData = Buffer.from(api.correlation_data, "utf8");
  if (api.content_type !== undefined) p.contentType = api.content_type;
  if (api.user_properties !== undefined) p.userProperties = { ...api.user_properties };
  return Object.keys(p).length === 0 ? undefined : p;
}
