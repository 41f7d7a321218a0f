// "Bad input closes only that connection": a well-behaved MQTT.js client connected to the same
// node before the bad input, which must still be connected and still publish to and receive from
// itself afterwards. It never reconnects, so a dropped connection cannot go unnoticed.

import mqtt, { type MqttClient } from "mqtt";

export function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const t = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms}ms: ${what}`)), ms);
  });
  return Promise.race([p, t]).finally(() => clearTimeout(timer));
}

export interface Bystander {
  client: MqttClient;
  /** Throws unless the client is still connected and gets its own QoS 1 message back. */
  check(): Promise<void>;
  end(): Promise<void>;
}

let seq = 0;

export async function bystander(url: string, protocolVersion: 4 | 5 = 5): Promise<Bystander> {
  const id = `bystander-${process.pid}-${++seq}`;
  const client = await mqtt.connectAsync(url, { clientId: id, protocolVersion, reconnectPeriod: 0 });
  let closed = false;
  client.on("close", () => {
    closed = true;
  });
  const topic = `bystander/${id}`;
  await client.subscribeAsync(topic, { qos: 1 });
  let n = 0;
  return {
    client,
    async check() {
      if (closed || !client.connected)
        throw new Error("the bystander connection was closed by someone else's bad input");
      const payload = `ping-${++n}`;
      const got = new Promise<void>((resolve) => {
        const on = (t: string, p: Buffer): void => {
          if (t === topic && p.toString() === payload) {
            client.off("message", on);
            resolve();
          }
        };
        client.on("message", on);
      });
      await withTimeout(client.publishAsync(topic, payload, { qos: 1 }), 3000, "bystander PUBACK");
      await withTimeout(got, 3000, "bystander receiving its own message");
    },
    async end() {
      await client.endAsync(true);
    },
  };
}
