// The MQTT bridge's connection: an MQTT client (MQTT.js, loaded on the first connection) to the
// remote broker, one client per connection attempt with MQTT.js's own reconnection off (the bridge
// times reconnections and resends what was in flight). Forwarded messages keep their QoS, retain
// flag and 5.0 properties; a 5.0 bridge adds the trace context as `traceparent`/`tracestate`
// user properties. A QoS 1/2 message the remote refuses for good (5.0 reason code 0x87, 0x90, 0x95
// or 0x99: not authorized, invalid topic, too large) counts as sent and is reported: sending it
// again would be refused again and hold the queue forever. A 5.0 remote's Receive Maximum bounds
// the QoS 1/2 publishes unacknowledged at once (send-window.ts).

import { readFileSync } from "node:fs";
import { isIP } from "node:net";
import type { IClientOptions, IClientPublishOptions, MqttClient } from "mqtt";
import type { MessageProps, QoS } from "../broker/types.ts";
import { opensslCiphers, versionRange } from "../listeners/tls-options.ts";
import type { BridgeConfig } from "./bridge-conf.ts";
import type { Connector, ConnectorEvents, Outgoing } from "./connector.ts";
import { SendWindow } from "./send-window.ts";

const PROTOCOL_VERSION = { mqttv3: 3, mqttv4: 4, mqttv5: 5 } as const;

/**
 * 5.0 PUBACK/PUBREC reason codes that sending again cannot change (not authorized, topic name
 * invalid, packet too large, payload format invalid): the message counts as sent and refused.
 * Any other failure (0x80 unspecified, 0x97 quota exceeded...) is sent again.
 */
const PERMANENT = new Set([0x87, 0x90, 0x95, 0x99]);

export class MqttConnector implements Connector {
  private client: MqttClient | undefined;
  /** The current connection's window (5.0), or null (3.1/3.1.1: no Receive Maximum). */
  private window: SendWindow | null = null;
  private events: ConnectorEvents | undefined;
  private readonly subs = new Map<string, QoS>();

  constructor(
    private readonly cfg: BridgeConfig,
    /** A refused message, reported once. */
    private readonly onRefused: (topic: string, reason: string) => void,
  ) {}

  open(events: ConnectorEvents): void {
    this.events = events;
    import("mqtt").then(
      (m) => {
        try {
          this.connect(m.connect);
        } catch (err) {
          // A TLS file that went missing, a cipher list or PEM that OpenSSL refuses.
          if (this.events === events) {
            this.events = undefined;
            events.down((err as Error).message);
          }
        }
      },
      (err: Error) => events.down(`cannot load the MQTT client: ${err.message}`),
    );
  }

  private connect(connect: (opts: IClientOptions) => MqttClient): void {
    const events = this.events;
    if (events === undefined) return; // closed meanwhile
    const c = this.cfg;
    const tls = c.tls;
    const opts: IClientOptions & Record<string, unknown> = {
      host: c.host,
      port: c.port,
      protocol: tls === undefined ? "mqtt" : "mqtts",
      protocolVersion: PROTOCOL_VERSION[c.protoVer],
      protocolId: c.protoVer === "mqttv3" ? "MQIsdp" : "MQTT",
      clientId: c.clientId,
      clean: c.cleanStart,
      username: c.username,
      password: c.password,
      keepalive: Math.round(c.keepaliveMs / 1000),
      reconnectPeriod: 0,
      connectTimeout: 30_000,
      queueQoSZero: false,
      resubscribe: false,
    };
    if (tls !== undefined) {
      Object.assign(opts, {
        ca: tls.ca === undefined ? undefined : readFileSync(tls.ca),
        cert: tls.cert === undefined ? undefined : readFileSync(tls.cert),
        key: tls.key === undefined ? undefined : readFileSync(tls.key),
        ciphers: opensslCiphers(tls.ciphers),
        ...versionRange(tls.versions),
        rejectUnauthorized: tls.verify,
        servername: tls.serverName ?? (isIP(c.host) === 0 ? c.host : undefined),
      });
    }
    const client = connect(opts);
    this.client = client;
    let up = false;
    let lastError = "";
    client.on("connect", (connack) => {
      if (this.client !== client) return;
      up = true;
      this.window = c.protoVer === "mqttv5" ? new SendWindow(connack.properties?.receiveMaximum ?? 65535) : null;
      for (const [topic, qos] of this.subs) this.subscribeOn(client, topic, qos);
      events.up();
    });
    client.on("error", (err) => {
      lastError = err.message;
    });
    client.on("message", (topic, payload, packet) => {
      if (this.client !== client) return;
      const p = packet.properties;
      const props: MessageProps | undefined =
        p === undefined
          ? undefined
          : {
              payloadFormatIndicator: p.payloadFormatIndicator,
              messageExpiryInterval: p.messageExpiryInterval,
              contentType: p.contentType,
              responseTopic: p.responseTopic,
              correlationData: p.correlationData,
              userProperties: p.userProperties,
            };
      events.message(topic, payload, packet.qos, packet.retain, props);
    });
    client.on("close", () => {
      if (this.client !== client) return;
      this.client = undefined;
      client.end(true);
      events.down(up ? `connection lost${lastError ? `: ${lastError}` : ""}` : lastError || "connection refused");
    });
  }

  send(batch: readonly Outgoing[], done: (err?: Error) => void): void {
    const client = this.client;
    if (client === undefined) {
      done(new Error("not connected"));
      return;
    }
    let left = batch.length;
    let failed: Error | undefined;
    const window = this.window;
    const one = (o: Outgoing) => (err?: (Error & { code?: number }) | null) => {
      if (err !== undefined && err !== null) {
        if (typeof err.code === "number" && PERMANENT.has(err.code)) this.onRefused(o.topic, err.message);
        else failed ??= err;
      }
      if (o.msg.qos > 0) window?.release();
      if (--left === 0) done(failed);
    };
    for (const o of batch) {
      const send = () => client.publish(o.topic, o.msg.payload, this.publishOptions(o), one(o));
      if (window === null) send();
      else window.submit(o.msg.qos, send);
    }
  }

  private publishOptions(o: Outgoing): IClientPublishOptions {
    const m = o.msg;
    const opts: IClientPublishOptions = { qos: m.qos, retain: m.retain };
    if (this.cfg.protoVer !== "mqttv5") return opts;
    const p = m.properties;
    const userProperties = o.trace === undefined ? p?.userProperties : { ...p?.userProperties, ...o.trace };
    const remaining = m.expiresAt === 0 ? undefined : Math.max(1, Math.ceil((m.expiresAt - Date.now()) / 1000));
    opts.properties = {
      payloadFormatIndicator: p?.payloadFormatIndicator,
      messageExpiryInterval: remaining,
      contentType: p?.contentType,
      responseTopic: p?.responseTopic,
      correlationData: p?.correlationData,
      userProperties,
    };
    return opts;
  }

  subscribe(topic: string, qos: QoS): void {
    this.subs.set(topic, qos);
    if (this.client?.connected) this.subscribeOn(this.client, topic, qos);
  }

  private subscribeOn(client: MqttClient, topic: string, qos: QoS): void {
    // 5.0: No Local, so that what the bridge forwards does not come back through its subscriptions.
    client.subscribe(topic, { qos, nl: this.cfg.protoVer === "mqttv5" }, (err, granted) => {
      const refused = granted?.find((g) => g.qos === 128);
      if (err !== undefined && err !== null) this.onRefused(topic, `subscription failed: ${err.message}`);
      else if (refused !== undefined) this.onRefused(topic, "subscription refused by the remote broker");
    });
  }

  unsubscribe(topic: string): void {
    this.subs.delete(topic);
    if (this.client?.connected) this.client.unsubscribe(topic);
  }

  /** Ends the connection at once: what is in flight is sent again on the next one anyway. */
  async close(): Promise<void> {
    const client = this.client;
    this.client = undefined;
    this.events = undefined;
    if (client === undefined) return;
    await new Promise<void>((resolve) => client.end(true, {}, () => resolve()));
  }
}
