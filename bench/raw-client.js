// A minimal MQTT 3.1.1 client for load generation, built so that the client side is never the
// bottleneck: pre-serialized PUBLISH templates patched in place (packet id, sequence number,
// timestamp), a streaming frame walker that reads only the fixed header, the topic length and the
// first 16 bytes of a payload (large frames are skipped, never reassembled), acknowledgements
// batched per received chunk (PUBACK for QoS 1; PUBREC/PUBREL/PUBCOMP for QoS 2, on both the
// publishing and the subscribing side), and a bounded window of outstanding QoS 1/2 publishes.
//
// Payload layout (every bench payload is at least 16 bytes):
//   [0..3] publisher id (u32 BE)   [4..7] sequence number (u32 BE)   [8..15] send time (f64 BE,
//   performance.now() of the sending process; only the latency scenario reads it)

import net from "node:net";
import mqttPacket from "mqtt-packet";

export const PAYLOAD_HEADER = 16;

/**
 * Opens a connection and completes CONNECT/CONNACK. `localAddress` binds the source address
 * (127.0.0.x spreads the source ports over many addresses). Rejects on error, refusal or timeout.
 */
export function connectRaw({ host, port, clientId, clean = true, localAddress, timeout = 15000 }) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port, localAddress, noDelay: true });
    const c = new RawClient(sock);
    const fail = (err) => {
      clearTimeout(timer);
      sock.destroy();
      reject(err);
    };
    const timer = setTimeout(() => fail(new Error(`CONNACK timeout for ${clientId}`)), timeout);
    sock.once("error", fail);
    sock.once("close", () => fail(new Error(`connection closed before CONNACK (${clientId})`)));
    sock.once("connect", () => {
      sock.write(mqttPacket.generate({ cmd: "connect", clientId, clean, keepalive: 0, protocolVersion: 4 }));
    });
    c.onConnack = (rc) => {
      c.onConnack = null;
      clearTimeout(timer);
      sock.removeAllListeners("error");
      sock.removeAllListeners("close");
      sock.on("error", () => {});
      if (rc !== 0) fail(new Error(`CONNACK return code ${rc} for ${clientId}`));
      else resolve(c);
    };
  });
}

/** Which (publisher, sequence) pairs one subscriber saw: one growable bitset per publisher. */
export class Tracker {
  constructor(pubCount) {
    this.bits = Array.from({ length: pubCount }, () => new Uint8Array(256));
    this.uniq = new Array(pubCount).fill(0);
    this.dups = new Array(pubCount).fill(0);
    this.foreign = 0; // messages whose publisher id is not part of the scenario
  }

  see(pubId, seq) {
    if (pubId >= this.bits.length) {
      this.foreign++;
      return;
    }
    let bits = this.bits[pubId];
    const byte = seq >>> 3;
    if (byte >= bits.length) {
      let n = bits.length * 2;
      while (n <= byte) n *= 2;
      const grown = new Uint8Array(n);
      grown.set(bits);
      this.bits[pubId] = bits = grown;
    }
    const mask = 1 << (seq & 7);
    if (bits[byte] & mask) this.dups[pubId]++;
    else {
      bits[byte] |= mask;
      this.uniq[pubId]++;
    }
  }
}

export class RawClient {
  constructor(sock) {
    this.sock = sock;
    this.pending = null; // unparsed tail of the previous chunk
    this.skip = 0; // bytes of a large frame still to be skipped
    this.received = 0; // PUBLISH packets received
    /** @type {Tracker | null} */
    this.tracker = null;
    /** Called with the send time (ms, performance.now()) of each received PUBLISH. */
    this.onLatency = null;
    this.onConnack = null;
    this.onSuback = null;
    /** Called for each PUBACK (QoS 1) or PUBCOMP (QoS 2) received: one outgoing publish done. */
    this.onDone = null;
    /** Called after each received chunk has been processed (publishers refill their window). */
    this.onChunkEnd = null;
    sock.on("data", (d) => this.onData(d));
  }

  onData(d) {
    let b = d;
    let off = 0;
    if (this.skip > 0) {
      if (d.length <= this.skip) {
        this.skip -= d.length;
        return;
      }
      off = this.skip;
      this.skip = 0;
    }
    if (this.pending !== null) {
      b = Buffer.concat([this.pending, off > 0 ? d.subarray(off) : d]);
      off = 0;
      this.pending = null;
    }
    let acks = null;
    let ackLen = 0;
    const end = b.length;
    while (off < end) {
      // Fixed header: type/flags, then 1-4 bytes of remaining length.
      if (end - off < 2) break;
      let len = 0;
      let mul = 1;
      let i = off + 1;
      let ok = false;
      while (i < end && i < off + 5) {
        const x = b[i++];
        len += (x & 0x7f) * mul;
        mul *= 128;
        if ((x & 0x80) === 0) {
          ok = true;
          break;
        }
      }
      if (!ok) break;
      const frameEnd = i + len;
      const type = b[off] >> 4;
      if (type === 3) {
        // PUBLISH: need topic length, topic, packet id and the payload header.
        if (end - i < 2) break;
        const qos = (b[off] >> 1) & 3;
        const p = i + 2 + b.readUInt16BE(i) + (qos > 0 ? 2 : 0);
        const need = Math.min(frameEnd, p + PAYLOAD_HEADER);
        if (end < need) break;
        this.received++;
        if (frameEnd - p >= PAYLOAD_HEADER) {
          if (this.tracker !== null) this.tracker.see(b.readUInt32BE(p), b.readUInt32BE(p + 4));
          if (this.onLatency !== null) this.onLatency(b.readDoubleBE(p + 8));
        }
        if (qos > 0) {
          if (acks === null) acks = Buffer.allocUnsafe(end - off);
          acks[ackLen] = qos === 1 ? 0x40 : 0x50; // PUBACK : PUBREC
          acks[ackLen + 1] = 2;
          acks[ackLen + 2] = b[p - 2];
          acks[ackLen + 3] = b[p - 1];
          ackLen += 4;
        }
      } else {
        if (end < frameEnd) break;
        if (type === 4 || type === 7) {
          // PUBACK / PUBCOMP: an outgoing QoS 1/2 publish is complete.
          if (this.onDone !== null) this.onDone();
        } else if (type === 5 || type === 6) {
          // PUBREC -> PUBREL (publisher side); PUBREL -> PUBCOMP (subscriber side).
          if (acks === null) acks = Buffer.allocUnsafe(end - off);
          acks[ackLen] = type === 5 ? 0x62 : 0x70;
          acks[ackLen + 1] = 2;
          acks[ackLen + 2] = b[i];
          acks[ackLen + 3] = b[i + 1];
          ackLen += 4;
        } else if (type === 2) {
          if (this.onConnack !== null) this.onConnack(b[i + 1]);
        } else if (type === 9) {
          if (this.onSuback !== null) this.onSuback(b[frameEnd - 1]);
        }
      }
      if (frameEnd > end) {
        this.skip = frameEnd - end;
        off = end;
        break;
      }
      off = frameEnd;
    }
    if (off < end) this.pending = b.subarray(off);
    if (ackLen > 0) this.sock.write(acks.subarray(0, ackLen));
    if (this.onChunkEnd !== null) this.onChunkEnd();
  }

  /** Subscribes to one filter; rejects when the broker refuses it (SUBACK 0x80). */
  subscribe(topic, qos) {
    return new Promise((resolve, reject) => {
      this.onSuback = (code) => {
        this.onSuback = null;
        if (code === 0x80) reject(new Error(`subscription to ${topic} refused`));
        else resolve(code);
      };
      this.sock.write(mqttPacket.generate({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos }] }));
    });
  }

  close() {
    this.sock.destroy();
  }
}

/** Encodes the MQTT remaining length. */
function varint(n) {
  const out = [];
  do {
    let x = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) x |= 0x80;
    out.push(x);
  } while (n > 0);
  return out;
}

/**
 * A serialized PUBLISH for one topic with a placeholder packet id, sequence number and timestamp.
 * `head` is everything up to and including the payload header; `tail` the constant rest of the
 * payload (sent from the same buffer every time when the payload is large).
 */
export function publishTemplate(topic, qos, payloadSize, pubId) {
  const tb = Buffer.from(topic);
  const rem = 2 + tb.length + (qos > 0 ? 2 : 0) + payloadSize;
  const lenBytes = varint(rem);
  const buf = Buffer.alloc(1 + lenBytes.length + rem, 0x78);
  let o = 0;
  buf[o++] = 0x30 | (qos << 1);
  for (const x of lenBytes) buf[o++] = x;
  buf.writeUInt16BE(tb.length, o);
  o += 2;
  tb.copy(buf, o);
  o += tb.length;
  const pidOff = qos > 0 ? o : -1;
  if (qos > 0) o += 2;
  buf.writeUInt32BE(pubId, o);
  buf.writeUInt32BE(0, o + 4);
  buf.writeDoubleBE(0, o + 8);
  const headLen = o + PAYLOAD_HEADER;
  return {
    buf,
    pidOff,
    seqOff: o + 4,
    tsOff: o + 8,
    head: buf.subarray(0, headLen),
    tail: buf.subarray(headLen),
  };
}

/** Templates larger than this are written as head + shared tail (no copy of the payload). */
const SPLIT_ABOVE = 1024;
/** Bytes per write for small messages. */
const BATCH_BYTES = 16384;

/**
 * One publishing connection. `topics` is the list of topic names it cycles over (message `seq`
 * goes to topics[seq % topics.length]).
 */
export class Publisher {
  constructor(client, { pubId, topics, qos, payloadSize, window = 64 }) {
    this.c = client;
    this.qos = qos;
    this.window = window;
    this.tpls = topics.map((t) => publishTemplate(t, qos, payloadSize, pubId));
    this.seq = 0;
    this.pid = 0;
    this.outstanding = 0;
    this.completed = 0;
  }

  /** Appends message `seq` to `out` at `o` (small templates) and returns the new offset. */
  #fill(out, o, t) {
    t.buf.copy(out, o);
    if (t.pidOff >= 0) {
      this.pid = this.pid === 65535 ? 1 : this.pid + 1;
      out.writeUInt16BE(this.pid, o + t.pidOff);
    }
    out.writeUInt32BE(this.seq++, o + t.seqOff);
    out.writeDoubleBE(performance.now(), o + t.tsOff);
    return o + t.buf.length;
  }

  /** Writes `n` messages; returns the socket's write() result. */
  send(n) {
    const tpls = this.tpls;
    const sock = this.c.sock;
    const first = tpls[this.seq % tpls.length];
    if (first.buf.length > SPLIT_ABOVE) {
      sock.cork();
      let ok = true;
      for (let k = 0; k < n; k++) {
        const t = tpls[this.seq % tpls.length];
        const head = Buffer.allocUnsafe(t.head.length);
        this.#fill(head, 0, { ...t, buf: t.head });
        sock.write(head);
        ok = sock.write(t.tail);
      }
      sock.uncork();
      return ok;
    }
    let size = 0;
    for (let k = 0, s = this.seq; k < n; k++, s++) size += tpls[s % tpls.length].buf.length;
    const out = Buffer.allocUnsafe(size);
    let o = 0;
    for (let k = 0; k < n; k++) o = this.#fill(out, o, tpls[this.seq % tpls.length]);
    return sock.write(out);
  }

  /** Messages per write for a flood of small messages. */
  #batch() {
    const len = this.tpls[0].buf.length;
    return len > SPLIT_ABOVE ? Math.max(1, Math.floor(65536 / len)) : Math.max(1, Math.floor(BATCH_BYTES / len));
  }

  /**
   * Publishes as fast as the broker takes it until `until` (ms epoch): QoS 0 as fast as the
   * socket drains; QoS 1/2 keeping `window` publishes outstanding. Resolves once every QoS 1/2
   * publish is complete (PUBACK / PUBCOMP) or `drainMs` after `until`, with
   * `{ sent, unacked, stoppedAt }` (`stoppedAt`: performance.now() when publishing stopped).
   */
  flood(until, drainMs = 10000) {
    return new Promise((resolve) => {
      let stoppedAt = 0;
      let finished = false;
      let drainTimer = null;
      const finish = () => {
        if (finished) return;
        finished = true;
        clearTimeout(drainTimer);
        this.c.onDone = null;
        this.c.onChunkEnd = null;
        resolve({ sent: this.seq, unacked: this.outstanding, stoppedAt });
      };
      const stop = () => {
        if (stoppedAt === 0) stoppedAt = performance.now();
        if (this.qos === 0 || this.outstanding === 0) finish();
        else if (drainTimer === null) drainTimer = setTimeout(finish, drainMs);
      };
      if (this.qos === 0) {
        const batch = this.#batch();
        let bytes = 0;
        const pump = () => {
          bytes = 0;
          for (;;) {
            if (Date.now() >= until) return stop();
            const ok = this.send(batch);
            bytes += batch * this.tpls[0].buf.length;
            if (!ok) {
              this.c.sock.once("drain", pump);
              return;
            }
            if (bytes >= 1 << 20) {
              setImmediate(pump);
              return;
            }
          }
        };
        pump();
        return;
      }
      this.c.onDone = () => {
        this.outstanding--;
        this.completed++;
      };
      const refill = () => {
        if (stoppedAt !== 0) {
          if (this.outstanding === 0) finish();
          return;
        }
        if (Date.now() >= until) return stop();
        const room = this.window - this.outstanding;
        if (room > 0) {
          this.outstanding += room;
          this.send(room);
        }
      };
      this.c.onChunkEnd = refill;
      // In case no acknowledgement arrives after `until`, stop by the clock too.
      setTimeout(refill, Math.max(0, until - Date.now()) + 1);
      refill();
    });
  }

  /**
   * Publishes at a fixed `rate` (msg/s) until `until`; each message carries its send time.
   * Resolves like flood().
   */
  paced(rate, until, drainMs = 10000) {
    return new Promise((resolve) => {
      const t0 = performance.now();
      let stoppedAt = 0;
      this.c.onDone = () => {
        this.outstanding--;
        this.completed++;
        if (stoppedAt !== 0 && this.outstanding === 0) done();
      };
      let drainTimer = null;
      const done = () => {
        clearTimeout(drainTimer);
        this.c.onDone = null;
        resolve({ sent: this.seq, unacked: this.outstanding, stoppedAt });
      };
      const tick = () => {
        if (Date.now() >= until) {
          stoppedAt = performance.now();
          if (this.qos === 0 || this.outstanding === 0) done();
          else drainTimer = setTimeout(done, drainMs);
          return;
        }
        const due = Math.floor(((performance.now() - t0) * rate) / 1000) + 1;
        // What is due goes out in one write (one message per tick at a low rate).
        const n = due - this.seq;
        if (n > 0) {
          if (this.qos > 0) this.outstanding += n;
          this.send(n);
        }
        setTimeout(tick, 1);
      };
      tick();
    });
  }
}
