// What the channel (the I/O-free MQTT state machine) needs from the connection that owns the
// socket: send packets or prepared bytes, know whether the socket keeps up, close.

import type { Packet } from "mqtt-packet";

/** Receives every packet of one traced connection (set only while a trace of that client runs). */
export interface PacketTracer {
  packetIn(p: Packet): void;
  packetOut(p: Packet): void;
  /** A PUBLISH serialized once and shared between subscribers. */
  bytesOut(bytes: Buffer): void;
}

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
  /**
   * True while this side stopped reading the socket: a hook's answer or a congested subscriber is
   * awaited (the client may be sending; nobody listens).
   */
  readingHeld(): boolean;
  /**
   * Flushes what was written and closes; `reason` is counted by the listener. `peerDone`: the
   * client sent DISCONNECT, so it sends nothing more and closes its side itself.
   */
  close(reason: string, peerDone?: boolean): void;
  /** Bytes written but not yet handed to the operating system (busy_port monitoring). */
  bufferedBytes(): number;
  /** Message tracing: null unless a trace of this client is running (one check per packet). */
  tracer: PacketTracer | null;
}
