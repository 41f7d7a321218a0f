// Hand-written decoder for the properties of a 5.0 PUBLISH (MQTT 5.0 section 3.3.2.3) on the
// message path: Payload Format Indicator, Message Expiry Interval, Topic Alias, Response Topic,
// Correlation Data, Content Type and User Properties, each at most once (User Properties any number
// of times). It answers the object mqtt-packet makes for the same bytes, or null for anything else
// (a Subscription Identifier, a property PUBLISH does not carry, a repeated property, a value
// running past the property length or the frame): the general codec then reads the whole frame, so
// rare and broken forms keep mqtt-packet's behaviour exactly (the tests compare the two on random
// and mangled frames). Strings are decoded, Correlation Data is a copy: a message never pins the frame.

import type { IPublishPacket } from "mqtt-packet";
import { copyOf } from "./bytes.ts";

type Properties = NonNullable<IPublishPacket["properties"]>;
type Utf8Buffer = Buffer & { utf8Slice(start: number, end: number): string };

// Bits of the properties seen, for "at most once".
const SEEN_FORMAT = 1;
const SEEN_EXPIRY = 2;
const SEEN_ALIAS = 4;
const SEEN_RESPONSE = 8;
const SEEN_CORRELATION = 16;
const SEEN_CONTENT = 32;

/** The end of the two-byte-length-prefixed field at `p`, or -1 when it runs past `end`. */
function fieldEnd(frame: Buffer, p: number, end: number): number {
  if (p + 2 > end) return -1;
  const stop = p + 2 + ((frame[p] << 8) | frame[p + 1]);
  return stop > end ? -1 : stop;
}

/**
 * Reads the property length and properties at `at` into `packet.properties` (left unset when
 * there are none). Returns where the payload starts, or -1 when the general codec must read the frame.
 */
export function readPublishProperties(frame: Buffer, at: number, packet: IPublishPacket): number {
  const size = frame.length;
  // Property length: a variable byte integer of at most 4 bytes.
  let length = 0;
  let mul = 1;
  let p = at;
  for (;;) {
    if (p >= size || p - at === 4) return -1;
    const b = frame[p++];
    length += (b & 0x7f) * mul;
    if ((b & 0x80) === 0) break;
    mul *= 128;
  }
  if (length === 0) return p;
  const end = p + length;
  if (end > size) return -1;
  const props: Properties = {};
  let seen = 0;
  const f = frame as Utf8Buffer;
  while (p < end) {
    const id = frame[p++];
    switch (id) {
      case 0x01:
        if ((seen & SEEN_FORMAT) !== 0 || p + 1 > end) return -1;
        seen |= SEEN_FORMAT;
        props.payloadFormatIndicator = frame[p] !== 0;
        p += 1;
        break;
      case 0x02:
        if ((seen & SEEN_EXPIRY) !== 0 || p + 4 > end) return -1;
        seen |= SEEN_EXPIRY;
        props.messageExpiryInterval = frame.readUInt32BE(p);
        p += 4;
        break;
      case 0x23:
        if ((seen & SEEN_ALIAS) !== 0 || p + 2 > end) return -1;
        seen |= SEEN_ALIAS;
        props.topicAlias = (frame[p] << 8) | frame[p + 1];
        p += 2;
        break;
      case 0x08:
      case 0x03: {
        const bit = id === 0x08 ? SEEN_RESPONSE : SEEN_CONTENT;
        const stop = fieldEnd(frame, p, end);
        if ((seen & bit) !== 0 || stop < 0) return -1;
        seen |= bit;
        const s = f.utf8Slice(p + 2, stop);
        if (id === 0x08) props.responseTopic = s;
        else props.contentType = s;
        p = stop;
        break;
      }
      case 0x09: {
        const stop = fieldEnd(frame, p, end);
        if ((seen & SEEN_CORRELATION) !== 0 || stop < 0) return -1;
        seen |= SEEN_CORRELATION;
        props.correlationData = copyOf(frame.subarray(p + 2, stop));
        p = stop;
        break;
      }
      case 0x26: {
        const nameEnd = fieldEnd(frame, p, end);
        const valueEnd = nameEnd < 0 ? -1 : fieldEnd(frame, nameEnd, end);
        if (valueEnd < 0) return -1;
        const name = f.utf8Slice(p + 2, nameEnd);
        const value = f.utf8Slice(nameEnd + 2, valueEnd);
        p = valueEnd;
        let user = props.userProperties;
        if (user === undefined) {
          user = Object.create(null) as Record<string, string | string[]>;
          props.userProperties = user;
        }
        // As mqtt-packet: a name seen before with a non-empty value collects its values in an array.
        const before = user[name];
        if (before) {
          if (Array.isArray(before)) before.push(value);
          else user[name] = [before, value];
        } else user[name] = value;
        break;
      }
      default:
        return -1;
    }
  }
  packet.properties = props;
  return p;
}
