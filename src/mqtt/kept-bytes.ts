// Memory for bytes kept for long by offline sessions, apart from the bytes of the traffic around
// them.
//
// A payload under 4 KB is a slice of Node's 8 KB Buffer pool, which every short-lived Buffer of the
// process shares: one kept slice keeps its whole slab. 100,000 kept 100-byte payloads, each
// among 20 / 100 short-lived ones: 2.2 / 10.5 KB of ArrayBuffers per kept payload. An exact copy
// of each (an ArrayBuffer of its own) costs about 100 bytes more heap and some 400 more RSS per
// payload (the backing store's own allocations) and takes 2 us to make. Here, small bytes are
// copied into slabs that hold kept bytes only (0.7 us): 101 bytes of ArrayBuffers per payload
// wherever it came from. A slab is freed once every payload in it is gone: kept bytes die together
// more than traffic does (a session's queue drains at once when it comes back, and sessions that
// went offline together come back together). Not for retained messages, whose lifetimes (until
// their topic is published again) vary too much for a slab: retainer.ts keeps exact copies.

import { ownCopyOf } from "./bytes.ts";

/** Size of a slab; bytes of half of it and more get an ArrayBuffer of their own. */
const SLAB_BYTES = 8 * 1024;
const SMALL_BELOW = SLAB_BYTES / 2;

const EMPTY = Buffer.alloc(0);

/** The slabs of every pool: bytes in one of them are kept already. */
const slabs = new WeakSet<ArrayBufferLike>();

/** Whether `bytes` hold nothing short-lived beside them: their own buffer, or a kept slab. */
export function isKept(bytes: Uint8Array): boolean {
  return bytes.buffer.byteLength === bytes.length || slabs.has(bytes.buffer);
}

/** A pool of slabs for one kind of kept bytes (their lifetimes alike). */
export class KeptBytes {
  private slab: Buffer = EMPTY;
  private used = 0;

  /**
   * `bytes` in memory that holds nothing else short-lived: `bytes` itself when it owns its buffer
   * or is kept already, else a copy (small: in this pool's current slab; large: of its own).
   */
  keep(bytes: Buffer): Buffer {
    const n = bytes.length;
    if (n === 0) return EMPTY;
    if (isKept(bytes)) return bytes;
    if (n >= SMALL_BELOW) return ownCopyOf(bytes);
    if (this.used + n > this.slab.length) {
      this.slab = Buffer.allocUnsafeSlow(SLAB_BYTES);
      slabs.add(this.slab.buffer);
      this.used = 0;
    }
    const out = this.slab.subarray(this.used, this.used + n);
    out.set(bytes);
    this.used += n;
    return out;
  }
}
