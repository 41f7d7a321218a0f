// The broker's core data: the internal Message that travels from publisher to subscribers, the
// client identity every hook sees, and per-subscription options (MQTT 5.0 section 3.8.3.1).

import type { UserProperties } from "mqtt-packet";
import { now as clockNow } from "./clock.ts";

export type QoS = 0 | 1 | 2;

/** 5.0 PUBLISH properties carried end to end (alias and subscription ids are per hop). */
export interface MessageProps {
  payloadFormatIndicator?: boolean;
  messageExpiryInterval?: number;
  contentType?: string;
  responseTopic?: string;
  correlationData?: Buffer;
  userProperties?: UserProperties;
}

export interface Message {
  /** Node-unique, monotonically increasing; see messageId() for the text form. */
  readonly seq: number;
  /** Publisher client id (`""` for messages the node itself makes). */
  readonly from: string;
  readonly fromUsername: string | undefined;
  readonly peerhost: string;
  topic: string;
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  properties: MessageProps | undefined;
  /** Milliseconds since the epoch when the broker received it. */
  readonly timestamp: number;
  /** Absolute expiry (ms since epoch), 0 when it never expires [MQTT-3.3.2-5]. */
  expiresAt: number;
  /** Published by the broker itself ($SYS, events): skipped by loop guards and rules. */
  readonly sys: boolean;
  /** Free-form tags other features attach (rule loop guard, republish depth). */
  headers: Record<string, unknown> | undefined;
}

export interface ClientInfo {
  clientId: string;
  username: string | undefined;
  peerHost: string;
  peerPort: number;
  sockPort: number;
  listener: string;
  zone: string;
  protoName: string;
  protoVer: number;
  isSuperuser: boolean;
  isBridge: boolean;
  mountpoint: string | undefined;
  peerCert: { cn?: string; dn?: string } | undefined;
}

export interface SubOpts {
  qos: QoS;
  /** No Local [MQTT-3.8.3-3]. */
  nl: boolean;
  /** Retain As Published. */
  rap: boolean;
  /** Retain Handling 0/1/2. */
  rh: 0 | 1 | 2;
  /** Subscription identifier, 0 when none. */
  subId: number;
  /** Shared subscription group, undefined when not shared. */
  share: string | undefined;
}

let seqCounter = 0;
const HEX2 = Array.from({ length: 256 }, (_, i) => i.toString(16).padStart(2, "0"));
const idPrefix = (Date.now() * 1000 + Math.floor(Math.random() * 1000)).toString(16);

export function nextSeq(): number {
  seqCounter = (seqCounter + 1) % Number.MAX_SAFE_INTEGER;
  return seqCounter;
}

/** The id text without its last two digits for the last `seq >>> 8` asked for (ids come in runs). */
let idHigh = -1;
let idHighText = "";

/** Text id of a message (hex), unique per node run; built only when someone asks (rules, API). */
export function messageId(m: Message): string {
  const s = m.seq;
  // Number formatting with a radix is slow: below 2^32 the 8 digits come from a table, and the
  // first six change once every 256 messages.
  if (s > 0xffffffff) return `${idPrefix}${s.toString(16)}`;
  const high = s >>> 8;
  if (high !== idHigh) {
    idHigh = high;
    idHighText = idPrefix + HEX2[high >>> 16] + HEX2[(high >>> 8) & 255] + HEX2[high & 255];
  }
  return idHighText + HEX2[s & 255];
}

export interface NewMessage {
  from?: string;
  fromUsername?: string;
  peerhost?: string;
  topic: string;
  payload: Buffer;
  qos: QoS;
  retain: boolean;
  properties?: MessageProps;
  sys?: boolean;
  now?: number;
}

/**
 * A system message: one the broker made (`sys`), or any message on a `$SYS/` topic. The family
 * leaves them out of `messages.publish` and `messages.dropped`, and rules skip them.
 */
export function isSysMessage(m: Message): boolean {
  return m.sys || m.topic.startsWith("$SYS/");
}

export function makeMessage(m: NewMessage): Message {
  const now = m.now ?? clockNow();
  const exp = m.properties?.messageExpiryInterval;
  return {
    seq: nextSeq(),
    from: m.from ?? "",
    fromUsername: m.fromUsername,
    peerhost: m.peerhost ?? "",
    topic: m.topic,
    payload: m.payload,
    qos: m.qos,
    retain: m.retain,
    properties: m.properties,
    timestamp: now,
    expiresAt: exp !== undefined && exp > 0 ? now + exp * 1000 : 0,
    sys: m.sys ?? false,
    headers: undefined,
  };
}
