// A WebSocket as the byte stream of an MQTT connection (MQTT 5.0 section 6: binary frames, any
// frame may hold any part of the packet stream). ws's createWebSocketStream puts a Duplex in
// between that sends every write as a frame of its own, one system call each once a write is
// pending: a tick's packets over 4 KB, written one by one under a cork, became a frame and a
// system call per packet. Here a write is sent as a frame at once and corked writes as one frame,
// each message ws reads goes to 'data' as it comes, and back-pressure is ws's count of bytes not
// yet with the operating system.

import { EventEmitter } from "node:events";
import type { Socket } from "node:net";
import type { WebSocket } from "ws";
import { readDirect } from "./direct-read.ts";
import type { ByteStream } from "./types.ts";

function emitData(this: Socket, chunk: Buffer): void {
  this.emit("data", chunk);
}

export class WebSocketStream extends EventEmitter implements ByteStream {
  /** A WebSocket close ends both directions: no half-open state, no 'end'. */
  readonly allowHalfOpen = false;
  destroyed = false;
  private readonly socket: Socket;
  /** Writes held by cork(). */
  private corked: Buffer[] | null = null;

  constructor(private readonly ws: WebSocket) {
    super();
    this.socket = (ws as unknown as { _socket: Socket })._socket;
    ws.on("message", (data: Buffer) => this.emit("data", data));
    ws.on("error", (err: Error) => this.emit("error", err));
    ws.on("close", () => {
      this.destroyed = true;
      this.emit("close");
    });
    this.socket.on("drain", () => this.emit("drain"));
    // The socket's reads go straight to ws's 'data' listener: no 64 KB buffer made per read and no
    // Readable in between (a plain socket; a TLS one keeps its 'data' events).
    readDirect(this.socket, emitData);
  }

  write(chunk: Buffer): boolean {
    if (this.destroyed) return false;
    if (this.corked !== null) this.corked.push(chunk);
    else this.ws.send(chunk);
    return !this.socket.writableNeedDrain;
  }

  get writableLength(): number {
    return this.ws.bufferedAmount;
  }

  /** Writes until uncork() go out as one frame (a frame per write would cost the peer one event each). */
  cork(): void {
    this.corked ??= [];
  }

  uncork(): void {
    const chunks = this.corked;
    this.corked = null;
    if (chunks === null || chunks.length === 0 || this.destroyed) return;
    this.ws.send(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks));
  }

  pause(): this {
    this.ws.pause();
    return this;
  }

  resume(): this {
    this.ws.resume();
    return this;
  }

  /** The closing handshake: a close frame, the socket closes once the peer answers (or ws times out). */
  end(): this {
    this.ws.close();
    return this;
  }

  destroy(): this {
    if (!this.destroyed) this.ws.terminate();
    return this;
  }
}
