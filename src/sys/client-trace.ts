// A trace of one client id: every packet in (RECV) and out (SEND) of its connections, written
// with a timestamp by the Connection's `tracer` hook point, plus its connect and disconnect. The
// CONNECT itself is read before the client id is known, so it is written from what it set up
// (client id, protocol, clean start, keepalive, will, properties) when hook `client.connect` binds
// the trace to the connection. Packet lines are `debug`; connect/disconnect lines `info`.

import mqttPacket, { type Packet } from "mqtt-packet";
import type { Channel } from "../broker/channel/channel.ts";
import type { PacketTracer } from "../broker/channel/port.ts";
import { formatPacket, records, type TraceLevel, traceLine } from "./trace-format.ts";
import type { TraceSink } from "./trace-sink.ts";

export class ClientTrace implements PacketTracer {
  readonly startedAt = Date.now();
  private who: string;
  private parser: ReturnType<typeof mqttPacket.parser> | null = null;
  private parserVer = 0;
  private protoVer = 4;

  constructor(
    readonly clientId: string,
    readonly level: TraceLevel,
    readonly sink: TraceSink,
  ) {
    this.who = clientId;
  }

  get packets(): boolean {
    return records(this.level, "debug");
  }

  /** Binds to a connection of this client (packets flow through `conn.tracer` from now on). */
  attach(ch: Channel, connectProps?: Record<string, unknown>): void {
    this.who = `${this.clientId}@${ch.client.peerHost}:${ch.client.peerPort}`;
    this.protoVer = ch.conn.protoVer;
    if (!this.packets) return;
    ch.conn.tracer = this;
    if (connectProps === undefined) return;
    const c = ch.client;
    const w = ch.will;
    const connect = {
      cmd: "connect",
      clientId: c.clientId,
      protocolId: c.protoName,
      protocolVersion: c.protoVer,
      clean: ch.cleanStart,
      keepalive: ch.keepalive,
      username: c.username,
      will: w === null ? undefined : { topic: w.topic, qos: w.qos, retain: w.retain, payload: w.payload },
      properties: connectProps,
    } as unknown as Packet;
    this.packetIn(connect);
  }

  detach(ch: Channel): void {
    if (ch.conn.tracer === this) ch.conn.tracer = null;
  }

  info(event: string): void {
    if (records(this.level, "info")) this.sink.write(traceLine("info", this.who, event));
  }

  packetIn(p: Packet): void {
    this.sink.write(traceLine("debug", this.who, `RECV ${formatPacket(p)}`));
  }

  packetOut(p: Packet): void {
    this.sink.write(traceLine("debug", this.who, `SEND ${formatPacket(p)}`));
  }

  /** A PUBLISH serialized once for many subscribers: read back for the trace only. */
  bytesOut(bytes: Buffer): void {
    if (this.parser === null || this.parserVer !== this.protoVer) {
      const parser = mqttPacket.parser({ protocolVersion: this.protoVer });
      parser.on("packet", (p: Packet) => this.packetOut(p));
      parser.on("error", () => {
        this.parser = null;
        this.sink.write(traceLine("debug", this.who, "SEND <unreadable PUBLISH bytes>"));
      });
      this.parser = parser;
      this.parserVer = this.protoVer;
    }
    this.parser.parse(bytes);
  }
}
