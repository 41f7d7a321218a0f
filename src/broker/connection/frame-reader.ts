// Splits the inbound byte stream into whole MQTT packets using the fixed header's Remaining
// Length (MQTT 5.0 section 2.1.4), so an oversized packet is refused from its header before its
// body is buffered, and the codec only ever sees complete packets.

/** next() returns a Buffer (one whole packet) or one of these. */
export const NEED_MORE = 0;
export const MALFORMED = -1;
export const TOO_LARGE = -2;

export class FrameReader {
  // The oldest pending chunk, and the ones after it. Most reads hold one chunk (or none), so the
  // array is made only when a second chunk waits: an idle connection keeps no array (V8 would
  // keep its 17-slot backing store after the first push).
  private head: Buffer | null = null;
  private rest: Buffer[] | null = null;
  private buffered = 0;

  constructor(public maxPacketSize: number) {}

  push(chunk: Buffer): void {
    if (this.head === null) this.head = chunk;
    else (this.rest ??= []).push(chunk);
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
    let head = this.head as Buffer;
    const rest = this.rest;
    if (head.length < 5 && rest !== null && rest.length > 0) {
      rest.unshift(head);
      head = Buffer.concat(rest);
      rest.length = 0;
      this.head = head;
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
      if (head.length > total) this.head = head.subarray(total);
      else this.head = rest !== null && rest.length > 0 ? (rest.shift() as Buffer) : null;
    } else {
      // The frame spans chunks: copy its bytes only (the chunks after it stay as they are).
      const more = rest as Buffer[];
      frame = Buffer.allocUnsafe(total);
      head.copy(frame, 0);
      let at = head.length;
      let k = 0;
      while (at < total) {
        const c = more[k];
        const n = Math.min(c.length, total - at);
        c.copy(frame, at, 0, n);
        at += n;
        if (n === c.length) k++;
        else more[k] = c.subarray(n);
      }
      more.splice(0, k);
      this.head = more.length > 0 ? (more.shift() as Buffer) : null;
    }
    this.buffered -= total;
    return frame;
  }

  clear(): void {
    this.head = null;
    this.rest = null;
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
