// PUBLISH serialization for the message path (MQTT 3.1.1 section 3.3, 5.0 section 3.3): one size
// computation, one buffer, no stream or intermediate objects. Writes the same bytes as mqtt-packet
// (properties in the object's key order; the property test holds it to that), for the properties
// a PUBLISH may carry; anything else answers null and the caller falls back to mqtt-packet. A
// traced delivery's `traceparent` (W3C trace context) can be written as the last property, in
// place of the message's own trace context user properties.

import { varLen, writeVar } from "./var-int.ts";

export interface PublishFields {
  topic: string;
  payload: Buffer;
  qos: number;
  retain: boolean;
  dup: boolean;
  /** Packet identifier (QoS 1/2). */
  pid: number;
  /** MQTT 5.0 properties by mqtt-packet's names (ignored for 3.x). */
  properties?: Readonly<Record<string, unknown>>;
}

const PFI = 0x01;
const EXPIRY = 0x02;
const CONTENT_TYPE = 0x03;
const RESPONSE_TOPIC = 0x08;
const CORRELATION = 0x09;
const SUB_ID = 0x0b;
const TOPIC_ALIAS = 0x23;
const USER_PROPERTY = 0x26;

/** The trace context user properties a `traceparent` given to encodePublish replaces. */
const TRACEPARENT = "traceparent";
const TRACESTATE = "tracestate";
/** A version 00 traceparent's length, and the bytes of its user property but the value. */
export const TRACEPARENT_LENGTH = 55;
const TRACEPARENT_HEAD = Buffer.from([USER_PROPERTY, 0, TRACEPARENT.length, ...Buffer.from(TRACEPARENT), 0, 55]);

/** Below this length an ASCII string is written and measured by a loop rather than a native call. */
const SHORT = 64;

/**
 * A string (or binary) field's byte length, its 16-bit length prefix left out; TOO_LONG beyond
 * 65,535 bytes, which makes the packet exceed the largest remaining length (encodePublish then
 * answers null).
 */
function fieldLength(n: number): number {
  return n > 0xffff ? TOO_LONG : n;
}

const TOO_LONG = 2 ** 29;

/** UTF-8 byte length of `s` as a field (fieldLength). */
function byteLength(s: string): number {
  const n = s.length;
  if (n >= SHORT) return fieldLength(Buffer.byteLength(s));
  for (let i = 0; i < n; i++) if (s.charCodeAt(i) > 0x7f) return fieldLength(Buffer.byteLength(s));
  return n;
}

function writeStr(buf: Buffer, at: number, s: string, len: number): number {
  buf[at] = len >>> 8;
  buf[at + 1] = len & 0xff;
  const from = at + 2;
  if (len === s.length && len < SHORT) for (let i = 0; i < len; i++) buf[from + i] = s.charCodeAt(i);
  else if (len > 0) (buf as Buffer & { utf8Write(s: string, at: number, len: number): number }).utf8Write(s, from, len);
  return from + len;
}

function isInt(v: unknown, max: number): v is number {
  return typeof v === "number" && Number.isInteger(v) && v >= 0 && v <= max;
}

/** Whether user property `name` is left out (a trace context property, when the delivery has its own). */
function replaced(name: string, traced: boolean): boolean {
  return traced && (name === TRACEPARENT || name === TRACESTATE);
}

/** Byte length of the properties, -1 when one cannot be written here. */
function propsLength(props: Readonly<Record<string, unknown>>, traced: boolean): number {
  let n = 0;
  for (const k in props) {
    const v = props[k];
    if (v === undefined) continue;
    switch (k) {
      case "payloadFormatIndicator":
        if (typeof v !== "boolean") return -1;
        n += 2;
        break;
      case "messageExpiryInterval":
        if (!isInt(v, 0xffffffff)) return -1;
        n += 5;
        break;
      case "topicAlias":
        if (!isInt(v, 0xffff)) return -1;
        n += 3;
        break;
      case "responseTopic":
      case "contentType":
        if (typeof v !== "string") return -1;
        n += 3 + byteLength(v);
        break;
      case "correlationData":
        if (!Buffer.isBuffer(v)) return -1;
        n += 3 + fieldLength(v.length);
        break;
      case "subscriptionIdentifier":
        if (Array.isArray(v)) {
          for (const id of v) {
            if (!isInt(id, 0x0fffffff)) return -1;
            n += 1 + varLen(id);
          }
        } else {
          if (!isInt(v, 0x0fffffff)) return -1;
          n += 1 + varLen(v);
        }
        break;
      case "userProperties": {
        if (typeof v !== "object" || v === null) return -1;
        const up = v as Record<string, unknown>;
        for (const name of Object.getOwnPropertyNames(up)) {
          if (replaced(name, traced)) continue;
          const value = up[name];
          const kl = byteLength(name);
          if (Array.isArray(value)) {
            for (const x of value) {
              if (typeof x !== "string") return -1;
              n += 5 + kl + byteLength(x);
            }
          } else if (typeof value === "string") n += 5 + kl + byteLength(value);
          else return -1;
        }
        break;
      }
      default:
        return -1;
    }
  }
  return n;
}

function writeProps(buf: Buffer, at: number, props: Readonly<Record<string, unknown>>, traced: boolean): number {
  let i = at;
  for (const k in props) {
    const v = props[k];
    if (v === undefined) continue;
    switch (k) {
      case "payloadFormatIndicator":
        buf[i++] = PFI;
        buf[i++] = v ? 1 : 0;
        break;
      case "messageExpiryInterval":
        buf[i++] = EXPIRY;
        buf.writeUInt32BE(v as number, i);
        i += 4;
        break;
      case "topicAlias":
        buf[i++] = TOPIC_ALIAS;
        buf.writeUInt16BE(v as number, i);
        i += 2;
        break;
      case "responseTopic":
      case "contentType": {
        buf[i++] = k === "responseTopic" ? RESPONSE_TOPIC : CONTENT_TYPE;
        const s = v as string;
        i = writeStr(buf, i, s, byteLength(s));
        break;
      }
      case "correlationData": {
        const b = v as Buffer;
        buf[i++] = CORRELATION;
        buf.writeUInt16BE(b.length, i);
        buf.set(b, i + 2);
        i += 2 + b.length;
        break;
      }
      case "subscriptionIdentifier":
        for (const id of Array.isArray(v) ? (v as number[]) : [v as number]) {
          buf[i++] = SUB_ID;
          i = writeVar(buf, i, id);
        }
        break;
      case "userProperties": {
        const up = v as Record<string, string | string[]>;
        for (const name of Object.getOwnPropertyNames(up)) {
          if (replaced(name, traced)) continue;
          const value = up[name];
          const kl = byteLength(name);
          for (const x of Array.isArray(value) ? value : [value]) {
            buf[i++] = USER_PROPERTY;
            i = writeStr(buf, i, name, kl);
            i = writeStr(buf, i, x, byteLength(x));
          }
        }
        break;
      }
    }
  }
  return i;
}

/**
 * The PUBLISH packet's bytes; with `headerOnly`, everything before the payload (the remaining
 * length still counts the payload, which the caller writes right after). Null when a 5.0 property
 * is not one a PUBLISH carries or has a value of the wrong type. A 5.0 `traceparent` (a version 00
 * one, TRACEPARENT_LENGTH ASCII characters) is the last property, the message's traceparent and
 * tracestate user properties left out: its value ends where the payload begins.
 */
export function encodePublish(
  p: PublishFields,
  v5: boolean,
  headerOnly = false,
  traceparent: string | null = null,
): Buffer | null {
  const topicLen = byteLength(p.topic);
  const traced = v5 && traceparent !== null;
  if (traced && (traceparent as string).length !== TRACEPARENT_LENGTH) return null;
  let propsLen = traced ? TRACEPARENT_HEAD.length + TRACEPARENT_LENGTH : 0;
  if (v5 && p.properties !== undefined) {
    const n = propsLength(p.properties, traced);
    if (n < 0) return null;
    propsLen += n;
  }
  const remaining = 2 + topicLen + (p.qos > 0 ? 2 : 0) + (v5 ? varLen(propsLen) + propsLen : 0) + p.payload.length;
  if (remaining > 268_435_455) return null;
  const headerLen = 1 + varLen(remaining) + remaining - p.payload.length;
  const buf = Buffer.allocUnsafe(headerOnly ? headerLen : headerLen + p.payload.length);
  buf[0] = 0x30 | (p.dup ? 0x08 : 0) | (p.qos << 1) | (p.retain ? 0x01 : 0);
  let i = writeVar(buf, 1, remaining);
  i = writeStr(buf, i, p.topic, topicLen);
  if (p.qos > 0) {
    buf[i] = p.pid >>> 8;
    buf[i + 1] = p.pid & 0xff;
    i += 2;
  }
  if (v5) {
    i = writeVar(buf, i, propsLen);
    if (p.properties !== undefined) i = writeProps(buf, i, p.properties, traced);
    if (traced) {
      buf.set(TRACEPARENT_HEAD, i);
      i += TRACEPARENT_HEAD.length;
      const tp = traceparent as string;
      for (let k = 0; k < TRACEPARENT_LENGTH; k++) buf[i + k] = tp.charCodeAt(k);
      i += TRACEPARENT_LENGTH;
    }
  }
  if (!headerOnly) buf.set(p.payload, i);
  return buf;
}
