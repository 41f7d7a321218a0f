// Byte-level building blocks of the inter-node protocol: a growable writer and a bounds-checked
// reader for unsigned LEB128 varints, fixed-width integers, doubles, byte strings and UTF-8
// strings. The reader throws WireError on anything malformed, so a bad frame from a peer becomes
// one exception the connection turns into "close this link", never a crash or a wrong read.

export class WireError extends Error {
  override readonly name = "WireError";
}

/**
 * Writes `s` as UTF-8 at `at` (the room was ensured) and answers the byte count: an ASCII prefix
 * byte by byte (topics, client ids and addresses are short and mostly ASCII: no native call, no
 * view), the rest by the native encoder.
 */
function writeUtf8(buf: Buffer, s: string, at: number): number {
  const len = s.length;
  let i = 0;
  if (len <= 256) {
    for (; i < len; i++) {
      const c = s.charCodeAt(i);
      if (c >= 0x80) break;
      buf[at + i] = c;
    }
    if (i === len) return len;
  }
  // From a non-ASCII unit on (never inside a surrogate pair: the prefix is ASCII).
  return i + buf.write(i === 0 ? s : s.slice(i), at + i, "utf8");
}

export class BufWriter {
  buf: Buffer;
  pos = 0;

  constructor(initial = 1024) {
    this.buf = Buffer.allocUnsafe(initial);
  }

  private ensure(n: number): void {
    if (this.pos + n <= this.buf.length) return;
    let size = this.buf.length * 2;
    while (size < this.pos + n) size *= 2;
    const next = Buffer.allocUnsafe(size);
    this.buf.copy(next, 0, 0, this.pos);
    this.buf = next;
  }

  u8(v: number): void {
    this.ensure(1);
    this.buf[this.pos++] = v;
  }

  u16(v: number): void {
    this.ensure(2);
    this.buf.writeUInt16BE(v, this.pos);
    this.pos += 2;
  }

  u32(v: number): void {
    this.ensure(4);
    this.buf.writeUInt32BE(v, this.pos);
    this.pos += 4;
  }

  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleBE(v, this.pos);
    this.pos += 8;
  }

  /** Unsigned LEB128, for 0 <= v <= Number.MAX_SAFE_INTEGER. */
  varint(v: number): void {
    this.ensure(8);
    while (v >= 0x80) {
      this.buf[this.pos++] = (v % 0x80) | 0x80;
      v = Math.floor(v / 0x80);
    }
    this.buf[this.pos++] = v;
  }

  raw(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Varint length, then the bytes. */
  bytes(b: Uint8Array): void {
    this.varint(b.length);
    this.raw(b);
  }

  /** Varint byte length, then UTF-8. */
  str(s: string): void {
    // At most 3 bytes per UTF-16 unit; write in place, then the exact length before it.
    const max = s.length * 3;
    const lenBytes = max < 0x80 ? 1 : max < 0x4000 ? 2 : max < 0x200000 ? 3 : 5;
    this.ensure(lenBytes + max);
    const start = this.pos + lenBytes;
    const n = writeUtf8(this.buf, s, start);
    // Varint of n padded to lenBytes (LEB128 allows continuation bytes with zero bits).
    let v = n;
    for (let i = 0; i < lenBytes; i++) {
      const last = i === lenBytes - 1;
      this.buf[this.pos + i] = (v % 0x80) | (last ? 0 : 0x80);
      v = Math.floor(v / 0x80);
    }
    this.pos = start + n;
  }

  /** Overwrites a u32 at `at` (frame length, counts). */
  patchU32(at: number, v: number): void {
    this.buf.writeUInt32BE(v, at);
  }

  /** A copy of what was written (the writer may be reused). */
  take(): Buffer {
    return Buffer.from(this.buf.subarray(0, this.pos));
  }

  /** The written bytes themselves (valid until the next write). */
  view(): Buffer {
    return this.buf.subarray(0, this.pos);
  }
}

export class BufReader {
  pos: number;

  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get remaining(): number {
    return this.end - this.pos;
  }

  private need(n: number): void {
    if (n < 0 || this.pos + n > this.end) throw new WireError("truncated frame");
  }

  u8(): number {
    this.need(1);
    return this.buf[this.pos++];
  }

  u16(): number {
    this.need(2);
    const v = this.buf.readUInt16BE(this.pos);
    this.pos += 2;
    return v;
  }

  u32(): number {
    this.need(4);
    const v = this.buf.readUInt32BE(this.pos);
    this.pos += 4;
    return v;
  }

  f64(): number {
    this.need(8);
    const v = this.buf.readDoubleBE(this.pos);
    this.pos += 8;
    return v;
  }

  varint(): number {
    let v = 0;
    let mul = 1;
    for (let i = 0; i < 8; i++) {
      const b = this.u8();
      v += (b & 0x7f) * mul;
      if ((b & 0x80) === 0) {
        if (v > Number.MAX_SAFE_INTEGER) throw new WireError("varint out of range");
        return v;
      }
      mul *= 0x80;
    }
    throw new WireError("varint too long");
  }

  /** `n` bytes as a view of the frame (callers copy what they keep). */
  raw(n: number): Buffer {
    this.need(n);
    const b = this.buf.subarray(this.pos, this.pos + n);
    this.pos += n;
    return b;
  }

  bytes(): Buffer {
    return this.raw(this.varint());
  }

  /** Owned copy of length-prefixed bytes. */
  bytesCopy(): Buffer {
    return Buffer.from(this.bytes());
  }

  str(): string {
    const n = this.varint();
    this.need(n);
    const s = this.buf.toString("utf8", this.pos, this.pos + n);
    this.pos += n;
    return s;
  }

  /** The rest of the frame as UTF-8. */
  rest(): string {
    const s = this.buf.toString("utf8", this.pos, this.end);
    this.pos = this.end;
    return s;
  }

  /** Throws unless the frame was consumed exactly. */
  done(): void {
    if (this.pos !== this.end) throw new WireError(`${this.end - this.pos} trailing bytes`);
  }
}
