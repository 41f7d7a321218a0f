// Compact binary form of a broker Message inside a FORWARD frame (layout in protocol.ts). Every
// field the receiver needs travels byte for byte: topic, payload, QoS, retain, sys, publisher id,
// username, peer host, timestamp, absolute expiry, the 5.0 properties (user properties and
// correlation data included) and the JSON-able part of `headers`. `seq` is node-local: the
// receiver gives the message a fresh one (makeMessage).

import type { UserProperties } from "mqtt-packet";
import type { Message, MessageProps, QoS } from "../../broker/types.ts";
import { makeMessage } from "../../broker/types.ts";
import { type BufReader, type BufWriter, WireError } from "./wire.ts";

const F_RETAIN = 0x04;
const F_SYS = 0x08;
const F_USERNAME = 0x10;
const F_PROPS = 0x20;
const F_HEADERS = 0x40;
const F_EXPIRES = 0x80;

const P_PFI = 0x01;
const P_PFI_TRUE = 0x02;
const P_EXPIRY = 0x04;
const P_CONTENT_TYPE = 0x08;
const P_RESPONSE_TOPIC = 0x10;
const P_CORRELATION = 0x20;
const P_USER = 0x40;

/** The JSON text of `headers`, or undefined when absent or not JSON-able (cycles, BigInt). */
function headersJson(h: Record<string, unknown> | undefined): string | undefined {
  if (h === undefined) return undefined;
  try {
    return JSON.stringify(h);
  } catch {
    return undefined;
  }
}

/** Rough wire size of `msg`, for queue accounting (no encoding). */
export function estimateSize(msg: Message): number {
  return 48 + msg.payload.length + msg.topic.length * 2 + msg.from.length + msg.peerhost.length;
}

export function encodeMessage(w: BufWriter, m: Message): void {
  const headers = headersJson(m.headers);
  const p = m.properties;
  let flags = m.qos & 0x03;
  if (m.retain) flags |= F_RETAIN;
  if (m.sys) flags |= F_SYS;
  if (m.fromUsername !== undefined) flags |= F_USERNAME;
  if (p !== undefined) flags |= F_PROPS;
  if (headers !== undefined) flags |= F_HEADERS;
  if (m.expiresAt !== 0) flags |= F_EXPIRES;
  w.u8(flags);
  w.str(m.topic);
  w.str(m.from);
  if (m.fromUsername !== undefined) w.str(m.fromUsername);
  w.str(m.peerhost);
  w.f64(m.timestamp);
  if (m.expiresAt !== 0) w.f64(m.expiresAt);
  w.bytes(m.payload);
  if (p !== undefined) encodeProps(w, p);
  if (headers !== undefined) w.str(headers);
}

function encodeProps(w: BufWriter, p: MessageProps): void {
  let f = 0;
  if (p.payloadFormatIndicator !== undefined) f |= P_PFI | (p.payloadFormatIndicator ? P_PFI_TRUE : 0);
  if (p.messageExpiryInterval !== undefined) f |= P_EXPIRY;
  if (p.contentType !== undefined) f |= P_CONTENT_TYPE;
  if (p.responseTopic !== undefined) f |= P_RESPONSE_TOPIC;
  if (p.correlationData !== undefined) f |= P_CORRELATION;
  if (p.userProperties !== undefined) f |= P_USER;
  w.u8(f);
  if (p.messageExpiryInterval !== undefined) {
    const e = p.messageExpiryInterval;
    w.varint(Number.isSafeInteger(e) && e >= 0 ? e : 0);
  }
  if (p.contentType !== undefined) w.str(p.contentType);
  if (p.responseTopic !== undefined) w.str(p.responseTopic);
  if (p.correlationData !== undefined) w.bytes(p.correlationData);
  if (p.userProperties !== undefined) {
    const entries = Object.entries(p.userProperties);
    w.varint(entries.length);
    for (const [k, v] of entries) {
      w.str(k);
      if (Array.isArray(v)) {
        w.u8(1);
        w.varint(v.length);
        for (const s of v) w.str(String(s));
      } else {
        w.u8(0);
        w.str(String(v));
      }
    }
  }
}

export function decodeMessage(r: BufReader): Message {
  const flags = r.u8();
  const qos = flags & 0x03;
  if (qos === 3) throw new WireError("bad QoS 3");
  const topic = r.str();
  const from = r.str();
  const fromUsername = flags & F_USERNAME ? r.str() : undefined;
  const peerhost = r.str();
  const timestamp = r.f64();
  const expiresAt = flags & F_EXPIRES ? r.f64() : 0;
  const payload = r.bytesCopy();
  const properties = flags & F_PROPS ? decodeProps(r) : undefined;
  let headers: Record<string, unknown> | undefined;
  if (flags & F_HEADERS) {
    const text = r.str();
    try {
      headers = JSON.parse(text) as Record<string, unknown>;
    } catch {
      throw new WireError("bad headers JSON");
    }
  }
  const m = makeMessage({
    from,
    fromUsername,
    peerhost,
    topic,
    payload,
    qos: qos as QoS,
    retain: (flags & F_RETAIN) !== 0,
    properties,
    sys: (flags & F_SYS) !== 0,
    now: timestamp,
  });
  m.expiresAt = expiresAt;
  m.headers = headers;
  return m;
}

function decodeProps(r: BufReader): MessageProps {
  const f = r.u8();
  const p: MessageProps = {};
  if (f & P_PFI) p.payloadFormatIndicator = (f & P_PFI_TRUE) !== 0;
  if (f & P_EXPIRY) p.messageExpiryInterval = r.varint();
  if (f & P_CONTENT_TYPE) p.contentType = r.str();
  if (f & P_RESPONSE_TOPIC) p.responseTopic = r.str();
  if (f & P_CORRELATION) p.correlationData = r.bytesCopy();
  if (f & P_USER) {
    const n = r.varint();
    if (n > r.remaining) throw new WireError("bad user property count");
    const up: UserProperties = {};
    for (let i = 0; i < n; i++) {
      const k = r.str();
      const kind = r.u8();
      let v: string | string[];
      if (kind === 0) v = r.str();
      else if (kind === 1) {
        const c = r.varint();
        if (c > r.remaining) throw new WireError("bad user property list");
        v = [];
        for (let j = 0; j < c; j++) v.push(r.str());
      } else throw new WireError(`bad user property kind ${kind}`);
      // A key named __proto__ must stay a plain own property.
      Object.defineProperty(up, k, { value: v, enumerable: true, writable: true, configurable: true });
    }
    p.userProperties = up;
  }
  return p;
}
