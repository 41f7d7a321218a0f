// Splits the inter-node byte stream into frames: a 4-byte big-endian length, then that many bytes
// (kind + body). Frames that fit in one chunk are views of it (no copy); a frame spread over
// chunks is assembled once. A length above the current limit is refused before any buffering.

import { WireError } from "./wire.ts";

export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;
  /** Bytes (length prefix included) the frame being assembled needs, -1 while unknown. */
  private need = -1;

  constructor(
    /** Largest frame accepted (bytes after the length); raised once the peer is authenticated. */
    public maxFrame: number,
  ) {}

  /**
   * Feeds bytes; calls `onFrame` for every whole frame, in order. Throws WireError on an
   * oversize or empty frame; stops early (dropping the rest) when `onFrame` returns false.
   */
  push(chunk: Buffer, onFrame: (frame: Buffer) => boolean): void {
    let buf: Buffer;
    if (this.buffered === 0) buf = chunk;
    else {
      this.chunks.push(chunk);
      this.buffered += chunk.length;
      if (this.need < 0 && this.buffered >= 4) {
        if (this.chunks[0].length < 4) this.chunks = [Buffer.concat(this.chunks, this.buffered)];
        this.need = 4 + this.checkLength(this.chunks[0].readUInt32BE(0));
      }
      // Assemble a frame spread over chunks once, when all of it is here.
      if (this.need < 0 || this.buffered < this.need) return;
      buf = Buffer.concat(this.chunks, this.buffered);
      this.chunks = [];
      this.buffered = 0;
      this.need = -1;
    }
    let pos = 0;
    while (buf.length - pos >= 4) {
      const len = this.checkLength(buf.readUInt32BE(pos));
      if (buf.length - pos - 4 < len) {
        this.need = 4 + len;
        break;
      }
      const frame = buf.subarray(pos + 4, pos + 4 + len);
      pos += 4 + len;
      if (!onFrame(frame)) return;
    }
    if (pos < buf.length) {
      const rest = buf.subarray(pos);
      this.chunks.push(rest);
      this.buffered = rest.length;
    }
  }

  private checkLength(len: number): number {
    if (len === 0) throw new WireError("empty frame");
    if (len > this.maxFrame) throw new WireError(`frame of ${len} bytes over the limit of ${this.maxFrame}`);
    return len;
  }
}
