// Hand-written decoder for the common CONNECT (MQTT 5.0 section 3.1, 3.1.1 section 3.1): protocol
// name MQTT or MQIsdp, level 3, 4 or 5 (no bridge bit), and for 5.0 no CONNECT or will properties.
// It answers the object mqtt-packet makes for the same frame, or null for anything else (a frame
// mqtt-packet refuses or reads differently, properties, trailing bytes): the general codec then
// decodes it, so errors and rare forms keep mqtt-packet's behaviour exactly (the tests compare the
// two on random and mangled frames). A connection storm decodes each CONNECT in a fraction of the
// general parser's time. Will payload and password are copies: a session never pins the frame.

import type { IConnectPacket } from "mqtt-packet";

/** The protocol names' bytes: "MQTT", and "MQIs" + "dp". */
const MQTT = 0x4d515454;
const MQIS = 0x4d514973;
const DP = 0x6470;

/** Decodes `frame` (one whole packet) when it is a common CONNECT; null otherwise. */
export function decodeConnect(frame: Buffer): IConnectPacket | null {
  if (frame[0] !== 0x10) return null; // not CONNECT, or header flags that mqtt-packet refuses
  const end = frame.length;
  let i = 1;
  while (i < 5 && (frame[i] & 0x80) !== 0) i++;
  i++;
  const length = end - i;
  if (i + 2 > end) return null;
  const nameLen = frame.readUInt16BE(i);
  i += 2;
  let protocolId: "MQTT" | "MQIsdp";
  if (nameLen === 4 && i + 4 <= end && frame.readUInt32BE(i) === MQTT) protocolId = "MQTT";
  else if (nameLen === 6 && i + 6 <= end && frame.readUInt32BE(i) === MQIS && frame.readUInt16BE(i + 4) === DP)
    protocolId = "MQIsdp";
  else return null;
  i += nameLen;
  if (i + 4 > end) return null; // level, flags, keep alive
  const level = frame[i];
  if (level !== 3 && level !== 4 && level !== 5) return null;
  const flags = frame[i + 1];
  if ((flags & 0x01) !== 0) return null; // reserved [MQTT-3.1.2-3]
  const will = (flags & 0x04) !== 0;
  const willQos = (flags >> 3) & 0x03;
  const willRetain = (flags & 0x20) !== 0;
  if (!will && (willQos !== 0 || willRetain)) return null; // [MQTT-3.1.2-11], [MQTT-3.1.2-13]
  const keepalive = frame.readUInt16BE(i + 2);
  i += 4;
  if (level === 5) {
    if (i >= end || frame[i] !== 0) return null; // CONNECT properties: the general codec
    i++;
  }
  const clientId = readString(frame, i, end);
  if (clientId === null) return null;
  i = next;
  const packet: IConnectPacket = {
    cmd: "connect",
    retain: false,
    qos: 0,
    dup: false,
    length,
    topic: null,
    payload: null,
    protocolId,
    protocolVersion: level,
    clean: (flags & 0x02) !== 0,
    keepalive,
    clientId,
  } as IConnectPacket;
  if (will) {
    if (level === 5) {
      if (i >= end || frame[i] !== 0) return null; // will properties: the general codec
      i++;
    }
    const topic = readString(frame, i, end);
    if (topic === null) return null;
    const payload = readBytes(frame, next, end);
    if (payload === null) return null;
    i = next;
    packet.will = { retain: willRetain, qos: willQos as 0 | 1 | 2, topic, payload };
  }
  if ((flags & 0x80) !== 0) {
    const username = readString(frame, i, end);
    if (username === null) return null;
    packet.username = username;
    i = next;
  }
  if ((flags & 0x40) !== 0) {
    const password = readBytes(frame, i, end);
    if (password === null) return null;
    packet.password = password;
    i = next;
  }
  return i === end ? packet : null;
}

/** Where the last readString()/readBytes() ended (one module slot: no result object per field). */
let next = 0;

/** A two-byte-length UTF-8 string at `i` (mqtt-packet decodes without validating: so does this). */
function readString(frame: Buffer, i: number, end: number): string | null {
  if (i + 2 > end) return null;
  const stop = i + 2 + frame.readUInt16BE(i);
  if (stop > end) return null;
  next = stop;
  return frame.toString("utf8", i + 2, stop);
}

/** Two-byte-length binary data at `i`, copied. */
function readBytes(frame: Buffer, i: number, end: number): Buffer | null {
  if (i + 2 > end) return null;
  const stop = i + 2 + frame.readUInt16BE(i);
  if (stop > end) return null;
  next = stop;
  return Buffer.from(frame.subarray(i + 2, stop));
}
