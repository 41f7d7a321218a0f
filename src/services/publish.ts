// Publishing on behalf of the management API and CLI: validates the topic and QoS, builds the
// message (payload plain or base64) and hands it to the broker like any client's.

import type { Broker } from "../broker/broker.ts";
import { type MessageProps, makeMessage, type QoS } from "../broker/types.ts";
import { validateTopicName } from "../mqtt/topic.ts";

export interface PublishRequest {
  topic: string;
  payload?: string;
  encoding?: "plain" | "base64";
  qos?: number;
  retain?: boolean;
  clientid?: string;
  properties?: MessageProps;
}

export type PublishOutcome =
  | { ok: true; deliveries: number; msgid: string }
  | { ok: false; error: "bad_topic" | "bad_qos" | "bad_payload" };

export class PublishService {
  constructor(private readonly broker: Broker) {}

  publish(r: PublishRequest): PublishOutcome {
    const qos = r.qos ?? 0;
    if (qos !== 0 && qos !== 1 && qos !== 2) return { ok: false, error: "bad_qos" };
    if (!validateTopicName(r.topic, this.broker.zone("external").maxTopicLevels))
      return { ok: false, error: "bad_topic" };
    let payload: Buffer;
    if (r.encoding === "base64") {
      const text = r.payload ?? "";
      if (!/^[A-Za-z0-9+/]*={0,2}$/.test(text)) return { ok: false, error: "bad_payload" };
      payload = Buffer.from(text, "base64");
    } else payload = Buffer.from(r.payload ?? "", "utf8");
    const msg = makeMessage({
      from: r.clientid ?? "",
      topic: r.topic,
      payload,
      qos: qos as QoS,
      retain: r.retain === true,
      properties: r.properties,
    });
    const deliveries = this.broker.publish(msg);
    return { ok: true, deliveries, msgid: String(msg.seq) };
  }
}
