// Outgoing PUBLISH bytes for one delivery (MQTT 5.0 section 3.3): retain flag per Retain As
// Published, remaining message expiry, subscription identifier, outbound topic alias, and the
// client's Maximum Packet Size [MQTT-3.1.2-24]. A delivery without per-subscriber properties is
// serialized once per message and protocol shape; subscribers share those bytes. A large payload
// (SPLIT_AT bytes and more) is never copied: the bytes built end before it and the caller writes
// the message's own payload buffer after them (takeTrailingPayload).

import mqttPacket, { type IPublishPacket } from "mqtt-packet";
import { copyOf } from "../../mqtt/bytes.ts";
import { encodePublish, type PublishFields, TRACEPARENT_LENGTH } from "../../mqtt/publish-encoder.ts";
import { now } from "../clock.ts";
import type { DeliveryTrace } from "../ports.ts";
import type { Delivery } from "../session/delivery.ts";
import type { Message } from "../types.ts";
import type { Channel } from "./channel.ts";

/**
 * Serialized bytes kept on the message, per shape: slot = qos * 4 + (v5 ? 2 : 0) + (retain ? 1 : 0).
 * QoS 0 bytes are sent as they are; QoS 1/2 bytes are a template copied per delivery with the
 * packet id (and DUP) patched in, which is much cheaper than serializing again.
 */
const CACHE = Symbol("publish-bytes");
type Cached = Message & { [CACHE]?: (Buffer | undefined)[] };

/** Payload size from which PUBLISH bytes are built without the payload (written after them). */
const SPLIT_AT = 4096;
/** The payload the last buildPublish() left for the caller to write, null if none. */
let trailing: Buffer | null = null;

/** The payload to write right after the bytes buildPublish() returned (null: they are whole). */
export function takeTrailingPayload(): Buffer | null {
  const t = trailing;
  trailing = null;
  return t;
}

export function buildPublish(ch: Channel, d: Delivery, pid: number, dup: boolean): Buffer | null {
  const msg = d.msg;
  const retain = d.retained || (d.opts.rap && msg.retain);
  const v5 = ch.protoVer === 5;
  // A traced message (tracing on, span context in its headers) gets a deliver span; 5.0
  // subscribers receive its traceparent: per-delivery bytes, never the shared cache.
  const tracing = msg.headers !== undefined ? ch.broker.tracing : null;
  const trace = tracing === null ? null : tracing.deliver(msg, ch.client, d.qos, v5);
  const shareable = !v5 || (trace === null && d.opts.subId === 0 && msg.expiresAt === 0 && ch.outAliases === null);
  if (shareable) {
    const slot = d.qos * 4 + (v5 ? 2 : 0) + (retain ? 1 : 0);
    const cache = ((msg as Cached)[CACHE] ??= []);
    let tpl = cache[slot];
    if (tpl === undefined) {
      tpl = serialize(ch, msg, d, d.qos > 0 ? 1 : 0, false, retain, null);
      cache[slot] = tpl;
    }
    return withTrailing(ch, msg, d.qos === 0 ? tpl : withPacketId(tpl, pid, dup), tpl);
  }
  if (trace !== null && d.opts.subId === 0 && msg.expiresAt === 0 && ch.outAliases === null) {
    const bytes = trace.tracestate === undefined ? tracedBytes(msg, d, pid, dup, retain, trace) : null;
    if (bytes !== null) return fits(ch, bytes);
  }
  newAlias = null;
  const built = serialize(ch, msg, d, pid, dup, retain, trace === null ? null : traceProperties(trace));
  const bytes = withTrailing(ch, msg, built, built);
  // A mapping the client never received must not be relied on later [MQTT-3.3.2-12].
  if (bytes === null && newAlias !== null) ch.outAliases?.forget(newAlias);
  return bytes;
}

/** Offset of the packet id (QoS 1/2) or of what follows the topic (QoS 0) in a PUBLISH. */
function afterTopic(tpl: Buffer): number {
  let i = 1;
  while ((tpl[i] & 0x80) !== 0) i++;
  const topicAt = i + 1;
  return topicAt + 2 + tpl.readUInt16BE(topicAt);
}

/** Copies a QoS 1/2 PUBLISH template and writes the packet id after the topic [MQTT-2.2.1] and DUP. */
function withPacketId(tpl: Buffer, pid: number, dup: boolean): Buffer {
  const out = copyOf(tpl);
  const at = afterTopic(tpl);
  out[at] = pid >>> 8;
  out[at + 1] = pid & 0xff;
  out[0] = dup ? out[0] | 0x08 : out[0] & ~0x08;
  return out;
}

/** A delivery's trace context as user properties: `traceparent` (version 00) and `tracestate`. */
function traceProperties(t: DeliveryTrace): Record<string, string> {
  const tp = `00-${t.traceId}-${t.spanId}-${HEX[(t.traceFlags >> 4) & 15]}${HEX[t.traceFlags & 15]}`;
  return t.tracestate === undefined ? { traceparent: tp } : { traceparent: tp, tracestate: t.tracestate };
}

const HEX = "0123456789abcdef";
/** Offsets in a version 00 traceparent `00-<32 hex>-<16 hex>-<2 hex>` (55 characters). */
const TP_TRACE_AT = 3;
const TP_SPAN_AT = 36;
const TP_FLAGS_AT = 53;
const TP_PLACEHOLDER = `00-${"0".repeat(32)}-${"0".repeat(16)}-00`;

/**
 * Traced 5.0 PUBLISH bytes per message and shape, with a traceparent user property (always 55
 * characters, the last property: encodePublish) at `at`: the first delivery's, the message's
 * trace id written into them. Each later
 * delivery copies them (withPacketId at QoS 1/2) and writes its span id and flags in place instead
 * of serializing again or formatting a traceparent; bytes handed to a socket are only read again.
 */
const TRACED = Symbol("traced-publish-bytes");
type TracedTemplate = { bytes: Buffer; at: number; traceId: string };
type TracedCached = Message & { [TRACED]?: (TracedTemplate | undefined)[] };

function tracedBytes(
  msg: Message,
  d: Delivery,
  pid: number,
  dup: boolean,
  retain: boolean,
  trace: DeliveryTrace,
): Buffer | null {
  if (trace.traceId.length !== 32 || trace.spanId.length !== 16) return null;
  const slot = d.qos * 2 + (retain ? 1 : 0);
  const cache = ((msg as TracedCached)[TRACED] ??= []);
  let tpl = cache[slot];
  let out: Buffer;
  if (tpl === undefined) {
    const fields: PublishFields = {
      topic: msg.topic,
      payload: msg.payload,
      qos: d.qos,
      retain,
      dup: d.qos > 0 && dup,
      pid,
    };
    fields.properties = msg.properties as PublishFields["properties"]; // the shape serialize() gives
    const built = encodePublish(fields, true, false, TP_PLACEHOLDER);
    // A property the encoder does not write: no template, each delivery serialized on its own.
    tpl =
      built === null
        ? NO_TEMPLATE
        : { bytes: built, at: built.length - msg.payload.length - TRACEPARENT_LENGTH, traceId: trace.traceId };
    cache[slot] = tpl;
    if (built === null) return null;
    out = built;
    writeAscii(out, tpl.at + TP_TRACE_AT, trace.traceId);
  } else {
    if (tpl.at < 0) return null;
    out = d.qos === 0 ? copyOf(tpl.bytes) : withPacketId(tpl.bytes, pid, dup);
    // A message's deliveries share its trace id.
    if (trace.traceId !== tpl.traceId) writeAscii(out, tpl.at + TP_TRACE_AT, trace.traceId);
  }
  const at = tpl.at;
  writeAscii(out, at + TP_SPAN_AT, trace.spanId);
  out[at + TP_FLAGS_AT] = HEX.charCodeAt((trace.traceFlags >> 4) & 15);
  out[at + TP_FLAGS_AT + 1] = HEX.charCodeAt(trace.traceFlags & 15);
  return out;
}

/**
 * Writes the characters of `s` (hex digits) at `at`. An id is a slice of a longer string (the
 * random ids' block, a parsed traceparent), which a charCodeAt loop reads directly: no traceparent
 * string is made.
 */
function writeAscii(out: Buffer, at: number, s: string): void {
  for (let i = 0; i < s.length; i++) out[at + i] = s.charCodeAt(i);
}

/** The template of a message whose traced bytes encodePublish cannot write. */
const NO_TEMPLATE: TracedTemplate = { bytes: Buffer.alloc(0), at: -1, traceId: "" };

/** Topic whose outbound alias the last serialize() assigned, null if none. */
let newAlias: string | null = null;

function fits(ch: Channel, bytes: Buffer): Buffer | null {
  return ch.clientMaxPacket > 0 && bytes.length > ch.clientMaxPacket ? null : bytes;
}

/**
 * Whether PUBLISH bytes end before their payload (serialize() left it out): shorter than their
 * fixed header's remaining length says. Read from the bytes, not kept in a WeakSet: a weak
 * collection with an entry per message costs every scavenge (ephemerons), measured at a fifth of
 * the CPU with 16 KB payloads.
 */
function endsBeforePayload(bytes: Buffer): boolean {
  let remaining = 0;
  let i = 1;
  for (let shift = 1; i < 5; shift *= 128) {
    const b = bytes[i++];
    remaining += (b & 0x7f) * shift;
    if ((b & 0x80) === 0) break;
  }
  return bytes.length < i + remaining;
}

/** `bytes` (built from `built`) and, when `built` ends before the payload, the payload to follow. */
function withTrailing(ch: Channel, msg: Message, bytes: Buffer, built: Buffer): Buffer | null {
  if (msg.payload.length < SPLIT_AT || !endsBeforePayload(built)) return fits(ch, bytes);
  if (ch.clientMaxPacket > 0 && bytes.length + msg.payload.length > ch.clientMaxPacket) return null;
  trailing = msg.payload;
  return bytes;
}

function serialize(
  ch: Channel,
  msg: Message,
  d: Delivery,
  pid: number,
  dup: boolean,
  retain: boolean,
  trace: Record<string, string> | null,
): Buffer {
  const v5 = ch.protoVer === 5;
  const fields: PublishFields = { topic: msg.topic, payload: msg.payload, qos: d.qos, retain, dup, pid };
  if (v5) fields.properties = outgoingProperties(ch, msg, d, trace, fields);
  // Traced deliveries keep whole bytes (their template is patched in place).
  const headerOnly = msg.payload.length >= SPLIT_AT && trace === null;
  const bytes = encodePublish(fields, v5, headerOnly);
  if (bytes !== null) return bytes;
  // A property the encoder does not write: mqtt-packet serializes the whole packet.
  const packet: IPublishPacket = {
    cmd: "publish",
    topic: fields.topic,
    payload: msg.payload,
    qos: d.qos,
    dup,
    retain,
    messageId: d.qos > 0 ? pid : undefined,
    properties: fields.properties as IPublishPacket["properties"],
  };
  return mqttPacket.generate(packet, { protocolVersion: ch.protoVer });
}

/**
 * A 5.0 delivery's properties: the message's own (as they are when nothing is added), plus the
 * remaining message expiry, the subscription identifier, the deliver span's trace context and
 * the outbound topic alias (a known alias empties `fields.topic`).
 */
function outgoingProperties(
  ch: Channel,
  msg: Message,
  d: Delivery,
  trace: Record<string, string> | null,
  fields: PublishFields,
): PublishFields["properties"] {
  const alias = ch.outAliases === null ? null : ch.outAliases.lookup(msg.topic);
  if (msg.expiresAt === 0 && d.opts.subId === 0 && trace === null && alias === null)
    return msg.properties as PublishFields["properties"];
  const props: NonNullable<IPublishPacket["properties"]> = msg.properties === undefined ? {} : { ...msg.properties };
  if (msg.expiresAt !== 0) {
    // [MQTT-3.3.2-6] the interval sent is what remains.
    props.messageExpiryInterval = Math.max(1, Math.ceil((msg.expiresAt - now()) / 1000));
  }
  if (d.opts.subId > 0) props.subscriptionIdentifier = d.opts.subId;
  if (trace !== null) {
    // The publisher's trace context is replaced by the deliver span's.
    const up = { ...props.userProperties };
    delete up.traceparent;
    delete up.tracestate;
    props.userProperties = Object.assign(up, trace);
  }
  if (alias !== null) {
    props.topicAlias = alias.alias;
    if (alias.known) fields.topic = "";
    else newAlias = msg.topic;
  }
  return props as PublishFields["properties"];
}
