// Messages and session transfers as JSON for inter-node calls (retained catch-up, session
// takeover): payloads in base64, a Buffer correlation data as `{b64}`.

import type { SessionTransfer } from "../broker/ports.ts";
import type { Message, QoS, SubOpts } from "../broker/types.ts";

export interface WireMessage {
  topic: string;
  payload: string;
  qos: 0 | 1 | 2;
  retain?: boolean;
  from: string;
  ts: number;
  exp: number;
  props?: Record<string, unknown>;
}

export function toWire(m: Message): WireMessage {
  const props = m.properties === undefined ? undefined : ({ ...m.properties } as Record<string, unknown>);
  if (props?.correlationData instanceof Buffer)
    props.correlationData = { b64: props.correlationData.toString("base64") };
  return {
    topic: m.topic,
    payload: m.payload.toString("base64"),
    qos: m.qos,
    retain: m.retain,
    from: m.from,
    ts: m.timestamp,
    exp: m.expiresAt,
    props,
  };
}

export function fromWire(w: WireMessage): Message {
  const props = w.props as Record<string, unknown> | undefined;
  const cd = props?.correlationData as { b64: string } | undefined;
  if (props !== undefined && cd !== undefined) props.correlationData = Buffer.from(cd.b64, "base64");
  return {
    seq: 0,
    from: w.from,
    fromUsername: undefined,
    peerhost: "",
    topic: w.topic,
    payload: Buffer.from(w.payload, "base64"),
    qos: w.qos,
    retain: w.retain ?? true,
    properties: props,
    timestamp: w.ts,
    expiresAt: w.exp,
    sys: false,
    headers: undefined,
  };
}

export interface WireTransfer {
  expiryInterval: number;
  subscriptions: [string, SubOpts][];
  pending: { msg: WireMessage; qos: QoS; opts: SubOpts; retained: boolean }[];
}

export function transferToWire(t: SessionTransfer): WireTransfer {
  return { ...t, pending: t.pending.map((d) => ({ ...d, msg: toWire(d.msg) })) };
}

export function transferFromWire(w: WireTransfer): SessionTransfer {
  return { ...w, pending: w.pending.map((d) => ({ ...d, msg: fromWire(d.msg) })) };
}
