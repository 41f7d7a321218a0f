// SUBSCRIBE and UNSUBSCRIBE (MQTT 5.0 sections 3.8 and 3.10) read by hand, SUBACK and UNSUBACK
// (3.9 and 3.11) written by hand: in a connection storm every client subscribes, and mqtt-packet
// spends about a microsecond and a kilobyte of garbage on each of these packets. Only the plain
// forms are read here (5.0: an empty property list); any other form, well-formed or not, is left
// to mqtt-packet (null), so what a client may send and how a bad packet is refused stay its.
// The objects read are shaped like mqtt-packet's.

import type { ISubscribePacket, ISubscription, IUnsubscribePacket } from "mqtt-packet";
import { varLen, writeVar } from "./var-int.ts";

type Utf8Frame = Buffer & { utf8Slice(start: number, end: number): string };

/**
 * The frame's packet id at `i` (the first byte after the remaining length) and, for 5.0, an empty
 * property list: where the payload starts, or -1 (left to mqtt-packet) when the payload is empty
 * or the properties are not.
 */
function payloadStart(frame: Buffer, i: number, protoVer: number): number {
  const p = protoVer === 5 ? i + 3 : i + 2;
  if (p >= frame.length) return -1;
  if (protoVer === 5 && frame[i + 2] !== 0) return -1;
  return p;
}

/** A SUBSCRIBE (header byte 0x82) whose filters and options are all well-formed; else null. */
export function decodeSubscribe(frame: Buffer, i: number, protoVer: number): ISubscribePacket | null {
  if (frame[0] !== 0x82) return null;
  let p = payloadStart(frame, i, protoVer);
  if (p < 0) return null;
  const v5 = protoVer === 5;
  // Reserved option bits: 7-6 in 5.0 (section 3.8.3.1), 7-2 before.
  const reserved = v5 ? 0xc0 : 0xfc;
  const end = frame.length;
  const subscriptions: ISubscription[] = [];
  while (p < end) {
    if (p + 2 > end) return null;
    const at = p + 2 + ((frame[p] << 8) | frame[p + 1]);
    if (at >= end) return null; // the options byte must follow the filter
    const topic = (frame as Utf8Frame).utf8Slice(p + 2, at);
    const o = frame[at];
    const qos = o & 0x03;
    const rh = (o >> 4) & 0x03;
    if ((o & reserved) !== 0 || qos === 3 || rh === 3) return null;
    subscriptions.push(
      (v5 ? { topic, qos, nl: (o & 0x04) !== 0, rap: (o & 0x08) !== 0, rh } : { topic, qos }) as ISubscription,
    );
    p = at + 1;
  }
  return { cmd: "subscribe", messageId: (frame[i] << 8) | frame[i + 1], subscriptions };
}

/** An UNSUBSCRIBE (header byte 0xA2) whose filters are all whole; else null. */
export function decodeUnsubscribe(frame: Buffer, i: number, protoVer: number): IUnsubscribePacket | null {
  if (frame[0] !== 0xa2) return null;
  let p = payloadStart(frame, i, protoVer);
  if (p < 0) return null;
  const end = frame.length;
  const unsubscriptions: string[] = [];
  while (p < end) {
    if (p + 2 > end) return null;
    const at = p + 2 + ((frame[p] << 8) | frame[p + 1]);
    if (at > end) return null;
    unsubscriptions.push((frame as Utf8Frame).utf8Slice(p + 2, at));
    p = at;
  }
  return { cmd: "unsubscribe", messageId: (frame[i] << 8) | frame[i + 1], unsubscriptions };
}

const NO_CODES: readonly number[] = [];

/** SUBACK: the packet id and one code per filter (5.0: after an empty property list). */
export function encodeSuback(pid: number, codes: readonly number[], v5: boolean): Buffer {
  return encodeCodes(0x90, pid, codes, v5);
}

/** UNSUBACK: the packet id; 5.0 adds an empty property list and one code per filter. */
export function encodeUnsuback(pid: number, codes: readonly number[], v5: boolean): Buffer {
  return encodeCodes(0xb0, pid, v5 ? codes : NO_CODES, v5);
}

function encodeCodes(first: number, pid: number, codes: readonly number[], v5: boolean): Buffer {
  const len = (v5 ? 3 : 2) + codes.length;
  const out = Buffer.allocUnsafe(1 + varLen(len) + len);
  out[0] = first;
  let at = writeVar(out, 1, len);
  out[at++] = pid >> 8;
  out[at++] = pid & 0xff;
  if (v5) out[at++] = 0;
  for (let k = 0; k < codes.length; k++) out[at++] = codes[k];
  return out;
}
