// A minimal MQTT 3.1.1 client for load generation: pre-serialized packets, a streaming frame
// walker that counts PUBLISH packets without decoding them, PUBACK for QoS 1, a bounded window of
// outstanding QoS 1 publishes. Built for throughput, so the client side is never the bottleneck.

import net from "node:net";
import mqttPacket from "mqtt-packet";

export function connectRaw({ host, port, clientId, clean = true }) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ host, port });
    sock.setNoDelay(true);
    const c = new RawClient(sock);
    sock.once("error", reject);
    sock.once("connect", () => {
      sock.write(mqttPacket.generate({ cmd: "connect", clientId, clean, keepalive: 0, protocolVersion: 4 }));
    });
    c.onConnack = () => {
      sock.off("error", reject);
      sock.on("error", () => {});
      resolve(c);
    };
  });
}

export class RawClient {
  constructor(sock) {
    this.sock = sock;
    this.buf = Buffer.alloc(0);
    this.received = 0;
    this.acked = 0;
    this.onConnack = null;
    this.onSuback = null;
    this.onPuback = null;
    this.onPublish = null;
    sock.on("data", (d) => this.onData(d));
  }

  onData(d) {
    const b = this.buf.length === 0 ? d : Buffer.concat([this.buf, d]);
    let off = 0;
    const acks = [];
    while (b.length - off >= 2) {
      let len = 0;
      let mul = 1;
      let i = off + 1;
      let ok = false;
      while (i < b.length && i < off + 5) {
        const x = b[i++];
        len += (x & 0x7f) * mul;
        mul *= 128;
        if ((x & 0x80) === 0) {
          ok = true;
          break;
        }
      }
      if (!ok || b.length - i < len) break;
      const type = b[off] >> 4;
      if (type === 3) {
        this.received++;
        const qos = (b[off] >> 1) & 3;
        if (qos > 0) {
          const tlen = b.readUInt16BE(i);
          const pid = b.readUInt16BE(i + 2 + tlen);
          acks.push(0x40, 2, pid >> 8, pid & 0xff);
        }
        if (this.onPublish) this.onPublish(b, off, i + len);
      } else if (type === 4) {
        this.acked++;
        if (this.onPuback) this.onPuback();
      } else if (type === 2 && this.onConnack) this.onConnack();
      else if (type === 9 && this.onSuback) this.onSuback();
      off = i + len;
    }
    this.buf = off === b.length ? Buffer.alloc(0) : b.subarray(off);
    if (acks.length > 0) this.sock.write(Buffer.from(acks));
  }

  subscribe(topic, qos) {
    return new Promise((resolve) => {
      this.onSuback = () => {
        this.onSuback = null;
        resolve();
      };
      this.sock.write(mqttPacket.generate({ cmd: "subscribe", messageId: 1, subscriptions: [{ topic, qos }] }));
    });
  }

  /** Publishes QoS 0 as fast as the socket drains, until `until` (ms epoch). */
  floodQos0(topic, payload, until) {
    const one = mqttPacket.generate({ cmd: "publish", topic, payload, qos: 0, retain: false, dup: false });
    const batch = Buffer.concat(Array.from({ length: 64 }, () => one));
    let sent = 0;
    return new Promise((resolve) => {
      const pump = () => {
        while (Date.now() < until) {
          sent += 64;
          if (!this.sock.write(batch)) {
            this.sock.once("drain", pump);
            return;
          }
          if (sent % 4096 === 0) {
            setImmediate(pump);
            return;
          }
        }
        resolve(sent);
      };
      pump();
    });
  }

  /** Publishes QoS 1 keeping `window` unacknowledged, until `until`. */
  floodQos1(topic, payload, until, window = 64) {
    let pid = 0;
    let sent = 0;
    const make = () => {
      pid = pid === 65535 ? 1 : pid + 1;
      sent++;
      return mqttPacket.generate({ cmd: "publish", topic, payload, qos: 1, messageId: pid, retain: false, dup: false });
    };
    return new Promise((resolve) => {
      let outstanding = 0;
      this.onPuback = () => {
        outstanding--;
        if (Date.now() < until) {
          outstanding++;
          this.sock.write(make());
        } else if (outstanding === 0) resolve(sent);
      };
      const first = [];
      for (let i = 0; i < window; i++) first.push(make());
      outstanding = window;
      this.sock.write(Buffer.concat(first));
    });
  }

  close() {
    this.sock.destroy();
  }
}
