// The general codec: mqtt-packet, for every packet the hand-written decoders (fast-codec.ts for the
// message path, fast-connect.ts for the common CONNECT) leave to it. Frames arrive whole (the frame
// reader split them), so one parser per protocol version, shared by all connections, decodes them
// synchronously: no parser object, buffer list or listeners per connection. A parser that failed,
// or a level's parser that read a CONNECT, is replaced, so no frame leaves state behind for the next.

import mqttPacket, { type Packet, type Parser } from "mqtt-packet";

// mqtt-packet would otherwise build, on its first encode, a table of 65,536 two-byte Buffers
// (about 7 MB of heap in tiny objects, whose promotion and marking stall the event loop for
// 10-20 ms soon after start); the packets it still encodes write their numbers directly.
mqttPacket.writeToStream.cacheNumbers = false;

const parsers: (Parser | undefined)[] = [];
let decoded: Packet | null = null;
let failure: Error | null = null;

function makeParser(protoVer: number): Parser {
  const p = mqttPacket.parser(protoVer === 0 ? {} : { protocolVersion: protoVer });
  p.on("packet", (packet: Packet) => {
    decoded = packet;
  });
  p.on("error", (err: Error) => {
    failure = err;
  });
  return p;
}

/**
 * Decodes one whole frame. `protoVer` 0 is for a CONNECT (its own level decides); 3, 4 or 5 for
 * the packets after it. Returns the packet, or an Error describing why the frame is malformed.
 */
export function decodeFrame(frame: Buffer, protoVer: number): Packet | Error {
  let p = parsers[protoVer];
  if (p === undefined) {
    p = makeParser(protoVer);
    parsers[protoVer] = p;
  }
  decoded = null;
  failure = null;
  try {
    p.parse(frame);
  } catch (err) {
    failure = err instanceof Error ? err : new Error(String(err));
  }
  const packet = decoded as Packet | null;
  const err = failure as Error | null;
  decoded = null;
  failure = null;
  // A parser that failed is replaced; so is a level's parser that read a CONNECT (a client's
  // second one), which takes the CONNECT's level as its own from then on and would misread every
  // other client's packets. The CONNECT parser (0) reads nothing else.
  if (err !== null || packet === null || (protoVer !== 0 && packet.cmd === "connect")) parsers[protoVer] = undefined;
  if (err !== null || packet === null) return err ?? new Error("incomplete packet");
  return packet;
}

/** Serializes one packet for `protoVer`. */
export function encodePacket(packet: Packet, protoVer: number): Buffer {
  return mqttPacket.generate(packet, { protocolVersion: protoVer });
}
