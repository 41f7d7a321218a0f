// A peer's outgoing frames, in order: sealed FORWARD batches and CALL/REPLY frames, plus the
// FORWARD batch still open for new messages. Bounded in messages and bytes (calls and replies are
// not counted: they are few and their callers time out). O(1) push and shift.

import { BATCH_BYTES, beginFrame, endFrame, Kind } from "./protocol.ts";
import { BufWriter } from "./wire.ts";

/** A CALL waiting to be written: skipped when its caller gave up first. */
export interface CallTicket {
  id: number;
  cancelled: boolean;
  /** The connection it was written on, once it was. */
  sentOn: unknown;
}

export interface OutFrame {
  buf: Buffer;
  /** Messages in it (0 for CALL/REPLY). */
  msgs: number;
  call: CallTicket | undefined;
}

export class OutQueue {
  private frames: OutFrame[] = [];
  private head = 0;
  /** Messages queued, open batch included. */
  messages = 0;
  /** Bytes queued, open batch included. */
  bytes = 0;
  private batch: BufWriter | null = null;
  private batchAt = 0;
  private batchCount = 0;

  constructor(
    readonly maxMessages: number,
    readonly maxBytes: number,
  ) {}

  /** Whether a message of `size` encoded bytes fits (an empty queue takes anything). */
  fits(size: number): boolean {
    if (this.messages === 0) return true;
    return this.messages < this.maxMessages && this.bytes + size <= this.maxBytes;
  }

  /** Appends one encoded message to the open batch; seals it at BATCH_BYTES. */
  pushMessage(encoded: Buffer): void {
    if (this.batch === null) {
      this.batch = new BufWriter(Math.max(4096, encoded.length + 16));
      this.batchAt = beginFrame(this.batch, Kind.forward);
      this.batch.u32(0);
      this.batchCount = 0;
      this.bytes += 9;
    }
    this.batch.raw(encoded);
    this.batchCount++;
    this.messages++;
    this.bytes += encoded.length;
    if (this.batch.pos - this.batchAt >= BATCH_BYTES) this.seal();
  }

  /** Closes the open batch into a frame (before a CALL/REPLY, or to write it). */
  seal(): void {
    const w = this.batch;
    if (w === null) return;
    w.patchU32(this.batchAt + 5, this.batchCount);
    endFrame(w, this.batchAt);
    // Keep a view unless the writer grew far past the frame (then copy, to free the rest).
    const buf = w.pos * 2 < w.buf.length ? w.take() : w.view();
    this.frames.push({ buf, msgs: this.batchCount, call: undefined });
    this.batch = null;
  }

  pushControl(buf: Buffer, call?: CallTicket): void {
    this.seal();
    this.frames.push({ buf, msgs: 0, call });
  }

  /** A sealed frame is waiting (a full batch, a call or a reply): worth writing now. */
  get hasSealed(): boolean {
    return this.head < this.frames.length;
  }

  get empty(): boolean {
    return this.head === this.frames.length && this.batch === null;
  }

  /** The next sealed frame, or undefined (call seal() first to include the open batch). */
  shift(): OutFrame | undefined {
    if (this.head === this.frames.length) return undefined;
    const f = this.frames[this.head];
    this.frames[this.head++] = undefined as unknown as OutFrame;
    if (this.head === this.frames.length) {
      this.frames = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.frames.length) {
      this.frames = this.frames.slice(this.head);
      this.head = 0;
    }
    if (f.msgs > 0) {
      this.messages -= f.msgs;
      this.bytes -= f.buf.length;
    }
    return f;
  }

  /** Empties the queue; returns the calls that were in it and how many messages it held. */
  clear(): { calls: CallTicket[]; messages: number } {
    const calls: CallTicket[] = [];
    for (let i = this.head; i < this.frames.length; i++) {
      const c = this.frames[i].call;
      if (c !== undefined) calls.push(c);
    }
    const messages = this.messages;
    this.frames = [];
    this.head = 0;
    this.batch = null;
    this.messages = 0;
    this.bytes = 0;
    return { calls, messages };
  }
}
