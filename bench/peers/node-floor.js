// node-floor as a bench peer: the least an MQTT broker written for Node.js does, to show what the
// runtime itself costs per message and per connection on this machine. One Node process, a plain
// TCP server on 127.0.0.1 (port 0 unless given as the first argument), MQTT 3.1.1 only, and no
// broker at all behind it: no sessions, no topic matching, no queues, no hooks, no timers.
//   - CONNECT: CONNACK accepted; SUBSCRIBE: the connection becomes a subscriber (SUBACK grants
//     what was asked); PINGREQ: PINGRESP; DISCONNECT: the connection ends.
//   - PUBLISH: the frame's bytes, unchanged (topic, QoS, packet id), are written to every
//     subscribed connection, whatever its filters; QoS 1 is acknowledged with PUBACK, QoS 2 with
//     PUBREC, and a PUBREL with PUBCOMP. A subscriber's PUBREC is answered with PUBREL; its PUBACK
//     and PUBCOMP end the exchange.
// Enough for the bench's latency flow (one publisher, one subscriber, packet ids never reused while
// in flight), its connection rate and its idle connections; no other scenario (bench/run.js skips
// them). Frames are walked by their fixed header only; a frame split across reads is put together.
// Prints {"port":N,"floor":"node-floor"} once listening; exits on SIGTERM/SIGINT or when its stdin
// closes (the bench runner is gone).

import { createServer } from "node:net";
import { exitWithRunner } from "./runner-exit.js";

const CONNACK = Buffer.from([0x20, 0x02, 0x00, 0x00]);
const PINGRESP = Buffer.from([0xd0, 0x00]);

/** Connections that sent a SUBSCRIBE. */
const subscribers = new Set();

/** [first byte, 2, packet id] of an acknowledgement for the packet id at `frame[idAt..]`. */
function ack(first, frame, idAt) {
  return Buffer.from([first, 0x02, frame[idAt], frame[idAt + 1]]);
}

/** Size of the fixed header whose remaining length remainingLength() read last. */
let headSize = 0;

/** Remaining length at `buf[at + 1..]` (its header's size in headSize), or -1 when not all there yet. */
function remainingLength(buf, at) {
  let value = 0;
  let mult = 1;
  for (let i = at + 1; i < buf.length && i < at + 5; i++) {
    value += (buf[i] & 0x7f) * mult;
    if ((buf[i] & 0x80) === 0) {
      headSize = i - at + 1;
      return value;
    }
    mult *= 128;
  }
  return -1;
}

function onFrame(sock, f) {
  const type = f[0] >> 4;
  switch (type) {
    case 3: {
      for (const s of subscribers) s.write(f);
      const qos = (f[0] >> 1) & 3;
      if (qos === 0) return;
      // The packet id follows the topic: fixed header, 2 length bytes, the topic.
      remainingLength(f, 0);
      const idAt = headSize + 2 + f.readUInt16BE(headSize);
      sock.write(ack(qos === 1 ? 0x40 : 0x50, f, idAt));
      return;
    }
    case 1:
      sock.write(CONNACK);
      return;
    case 8: {
      // SUBSCRIBE: packet id, then (filter, options) pairs; SUBACK grants each filter's QoS.
      const len = remainingLength(f, 0);
      const head = headSize;
      const granted = [];
      for (let i = head + 2; i < head + len; ) {
        const n = f.readUInt16BE(i);
        granted.push(f[i + 2 + n] & 3);
        i += 3 + n;
      }
      sock.write(Buffer.from([0x90, 2 + granted.length, f[head], f[head + 1], ...granted]));
      subscribers.add(sock);
      return;
    }
    case 5:
      sock.write(ack(0x62, f, 2)); // PUBREC from a subscriber: PUBREL
      return;
    case 6:
      sock.write(ack(0x70, f, 2)); // PUBREL from a publisher: PUBCOMP
      return;
    case 4:
    case 7:
      return; // PUBACK, PUBCOMP from a subscriber
    case 12:
      sock.write(PINGRESP);
      return;
    case 14:
      sock.end();
      return;
    default:
      sock.destroy();
  }
}

function onData(chunk) {
  const buf = this.rest === null ? chunk : Buffer.concat([this.rest, chunk]);
  this.rest = null;
  let at = 0;
  while (at < buf.length) {
    const len = remainingLength(buf, at);
    if (len < 0 || at + headSize + len > buf.length) break;
    const end = at + headSize + len;
    onFrame(this, buf.subarray(at, end));
    at = end;
  }
  if (at < buf.length) this.rest = buf.subarray(at);
}

function onClose() {
  subscribers.delete(this);
}

/** A reset peer: the close that follows forgets the connection. */
function onError() {}

const server = createServer({ noDelay: true }, (sock) => {
  sock.rest = null;
  sock.on("data", onData);
  sock.on("close", onClose);
  sock.on("error", onError);
});
server.listen(Number(process.argv[2] ?? 0), "127.0.0.1", () => {
  process.stdout.write(`${JSON.stringify({ port: server.address().port, floor: "node-floor" })}\n`);
});
exitWithRunner();
