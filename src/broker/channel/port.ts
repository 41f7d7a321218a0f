// What the channel (the I/O-free MQTT state machine) needs from the connection that owns the
// socket: send packets or prepared bytes, know whether the socket keeps up, close.

import type { Packet } from "mqtt-packet";

export interface ConnectionPort {
  /** Protocol version used to serialize outgoing packets (set once CONNECT is read). */
  protoVer: number;
  /** Largest inbound packet accepted (bytes); the channel lowers it from configuration. */
  setMaxInbound(bytes: number): void;
  /** Serializes and writes one packet; returns the bytes written. */
  send(packet: Packet): number;
  /** Writes bytes already serialized (shared between subscribers). */
  sendBytes(bytes: Buffer): void;
  /** False while the socket's write buffer is over its high-water mark. */
  writable(): boolean;
  /** Flushes what was written and closes; `reason` is counted by the listener. */
  close(reason: string): void;
}
