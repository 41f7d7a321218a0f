// Hand-written codec for the packets on the message path (MQTT 5.0 sections 3.3-3.7, 3.12): PUBLISH
// (3.1/3.1.1 and 5.0, its common properties read by publish-properties.ts) and the four
// acknowledgements, plus PINGREQ, the plain SUBSCRIBE and UNSUBSCRIBE (subscribe-codec.ts) and the
// plain DISCONNECT (a connection's usual last packet; 5.0 section 3.14, no reason code). It works
// on one whole frame, returns objects shaped like mqtt-packet's, and leaves every other packet to
// mqtt-packet (returns null). The payload is a view of the frame when large, a copy when small, so
// a small queued message never pins a whole socket chunk. The acknowledgements and the 3.x CONNACK
// (a connection storm's one reply per client) are encoded here too.

import type { IPublishPacket, Packet } from "mqtt-packet";
import { copyOf } from "./bytes.ts";
import { readPublishProperties } from "./publish-properties.ts";
import { decodeSubscribe, decodeUnsubscribe } from "./subscribe-codec.ts";

/** Returned for a frame that breaks the protocol (the caller closes the connection). */
export const MALFORMED_FRAME: unique symbol = Symbol("malformed-frame");

const COPY_BELOW = 4096;

/** The payload a decoded PUBLISH holds until its own is set. */
const NO_PAYLOAD = Buffer.alloc(0);

/** Decodes `frame` when it is a message-path packet; null otherwise (use the general codec). */
export function decodeFast(frame: Buffer, protoVer: number): Packet | null | typeof MALFORMED_FRAME {
  const b0 = frame[0];
  const type = b0 >> 4;
  let i = 1;
  while ((frame[i] & 0x80) !== 0) i++;
  i++; // first byte after the remaining length
  const len = frame.length - i;
  switch (type) {
    case 3:
      return decodePublish(frame, b0, i, protoVer);
    case 4:
    case 5:
    case 7:
      if ((b0 & 0x0f) !== 0) return MALFORMED_FRAME; // [MQTT-2.2.2-2] reserved flags
      return decodeAck(frame, type, i, len, protoVer);
    case 6:
      if ((b0 & 0x0f) !== 0x02) return MALFORMED_FRAME; // PUBREL flags are 0010 [MQTT-3.6.1-1]
      return decodeAck(frame, type, i, len, protoVer);
    case 8:
      return decodeSubscribe(frame, i, protoVer);
    case 10:
      return decodeUnsubscribe(frame, i, protoVer);
    case 12:
      if (b0 !== 0xc0 || len !== 0) return MALFORMED_FRAME;
      return PINGREQ;
    case 14:
      // A reason code, properties or header flags: the general codec reads (or refuses) them.
      if (b0 !== 0xe0 || len !== 0) return null;
      return protoVer === 5 ? { cmd: "disconnect", reasonCode: 0 } : { cmd: "disconnect" };
    default:
      return null;
  }
}

const PINGREQ: Packet = { cmd: "pingreq" };
const ACK_CMDS = ["", "", "", "", "puback", "pubrec", "pubrel", "pubcomp"] as const;

function decodeAck(
  frame: Buffer,
  type: number,
  i: number,
  len: number,
  protoVer: number,
): Packet | null | typeof MALFORMED_FRAME {
  if (len < 2) return MALFORMED_FRAME;
  if (protoVer < 5) {
    if (len !== 2) return MALFORMED_FRAME;
    return { cmd: ACK_CMDS[type], messageId: frame.readUInt16BE(i) } as Packet;
  }
  if (len > 3) return null; // 5.0 ack with properties: the general codec reads them
  const reasonCode = len === 3 ? frame[i + 2] : 0;
  return { cmd: ACK_CMDS[type], messageId: frame.readUInt16BE(i), reasonCode } as Packet;
}

function decodePublish(frame: Buffer, b0: number, i: number, protoVer: number): Packet | null | typeof MALFORMED_FRAME {
  const qos = (b0 >> 1) & 0x03;
  if (qos === 3) return MALFORMED_FRAME; // [MQTT-3.3.1-4]
  if (i + 2 > frame.length) return MALFORMED_FRAME;
  const tlen = (frame[i] << 8) | frame[i + 1];
  let p = i + 2 + tlen;
  if (p > frame.length) return MALFORMED_FRAME;
  // Buffer's native slice (what toString("utf8", ...) calls after checking its arguments).
  const topic = (frame as Buffer & { utf8Slice(start: number, end: number): string }).utf8Slice(i + 2, p);
  let messageId: number | undefined;
  if (qos > 0) {
    if (p + 2 > frame.length) return MALFORMED_FRAME;
    messageId = (frame[p] << 8) | frame[p + 1];
    p += 2;
  }
  const packet: IPublishPacket = {
    cmd: "publish",
    topic,
    payload: NO_PAYLOAD,
    qos: qos as 0 | 1 | 2,
    dup: (b0 & 0x08) !== 0,
    retain: (b0 & 0x01) !== 0,
    messageId,
  };
  if (protoVer === 5) {
    p = readPublishProperties(frame, p, packet);
    if (p < 0) return null; // the general codec reads (or refuses) them
  }
  const view = frame.subarray(p);
  packet.payload = view.length < COPY_BELOW ? copyOf(view) : view;
  return packet;
}

/** A 3.1 / 3.1.1 CONNACK (section 3.2): session present flag and return code, no properties. */
export function encodeConnackV3(sessionPresent: boolean, returnCode: number): Buffer {
  const out = Buffer.allocUnsafe(4);
  out[0] = 0x20;
  out[1] = 2;
  out[2] = sessionPresent ? 1 : 0;
  out[3] = returnCode;
  return out;
}

/** PUBACK/PUBREC/PUBREL/PUBCOMP bytes; 5.0 adds the reason code when it is not success. */
export function encodeAck(type: 4 | 5 | 6 | 7, pid: number, rc: number, v5: boolean): Buffer {
  const withRc = v5 && rc !== 0;
  const out = Buffer.allocUnsafe(withRc ? 5 : 4);
  out[0] = (type << 4) | (type === 6 ? 0x02 : 0);
  out[1] = withRc ? 3 : 2;
  out[2] = pid >> 8;
  out[3] = pid & 0xff;
  if (withRc) out[4] = rc;
  return out;
}
