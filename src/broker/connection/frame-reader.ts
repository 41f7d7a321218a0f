// Splits the inbound byte stream into whole MQTT packets using the fixed header's Remaining
// Length (MQTT 5.0 section 2.1.4), so an oversized packet is refused from its header before its
// body is buffered, and the codec only ever sees complete packets.

/** next() returns a Buffer (one whole packet) or one of these. */
export const NEED_MORE = 0;
export const MALFORMED = -1;
export const TOO_LARGE = -2;

export class FrameReader {
  private chunks: Buffer[] = [];
  private buffered = 0;

  constructor(public maxPacketSize: number) {}

  push(chunk: Buffer): void {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
  }

  get pending(): number {
    return this.buffered;
  }

  /** Size announced by the packet refused with TOO_LARGE. */
  tooLargeSize = 0;

  /** Returns the next complete packet, or why there is none (no allocation but the frame). */
  next(): Buffer | number {
    if (this.buffered < 2) return NEED_MORE;
    let head = this.chunks[0];
    if (head.length < 5 && this.chunks.length > 1) {
      head = Buffer.concat(this.chunks);
      this.chunks = [head];
    }
    // Remaining Length: at most 4 bytes of 7-bit groups [MQTT-1.5.5-1].
    let len = 0;
    let mul = 1;
    let i = 1;
    for (;;) {
      if (i >= head.length) return this.buffered > 5 ? MALFORMED : NEED_MORE;
      const b = head[i++];
      len += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) break;
      mul *= 128;
      if (i > 4) return MALFORMED;
    }
    const total = i + len;
    if (total > this.maxPacketSize) {
      this.tooLargeSize = total;
      return TOO_LARGE;
    }
    if (this.buffered < total) return NEED_MORE;
    let frame: Buffer;
    if (head.length >= total) {
      frame = head.subarray(0, total);
      if (head.length === total) this.chunks.shift();
      else this.chunks[0] = head.subarray(total);
    } else {
      // The frame spans chunks: copy its bytes only (the chunks after it stay as they are).
      frame = Buffer.allocUnsafe(total);
      let at = 0;
      let k = 0;
      while (at < total) {
        const c = this.chunks[k];
        const n = Math.min(c.length, total - at);
        c.copy(frame, at, 0, n);
        at += n;
        if (n === c.length) k++;
        else this.chunks[k] = c.subarray(n);
      }
      this.chunks.splice(0, k);
    }
    this.buffered -= total;
    return frame;
  }

  clear(): void {
    this.chunks = [];
    this.buffered = 0;
  }
}

/**
 * Reads the protocol level of a CONNECT frame before the codec does, so an unsupported version
 * is answered with CONNACK 0x01 / 0x84 [MQTT-3.1.2-2] rather than treated as garbage.
 */
export function connectProtocolLevel(frame: Buffer): number {
  let i = 1;
  while (i < 5 && i < frame.length && (frame[i] & 0x80) !== 0) i++;
  i++;
  if (i + 2 > frame.length) return -1;
  const nameLen = frame.readUInt16BE(i);
  const at = i + 2 + nameLen;
  return at < frame.length ? frame[at] & 0x7f : -1;
}
