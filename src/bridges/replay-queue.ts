// ReplayQueue: the local cache queue of a bridge ("replayq"). While a bridge is disconnected, the
// messages of its forwarded topics are appended here as opaque byte records (the caller serializes
// them) and re-forwarded in order once it recovers: pop() hands out batches from the head, ack()
// releases them. When an append would take the bytes held (appended, not acknowledged) over
// maxTotalBytes, the oldest items not yet popped are dropped.
//
// Without `dir` the items live in memory only (the appended Buffer itself is kept: do not reuse it).
// With `dir` they are appended to segment files and survive a restart until acknowledged; memory
// holds only per-segment bookkeeping and one read-ahead chunk.
//
// On-disk format (all integers big-endian):
//   NNNNNNNNNNNN.seg  segment files, 12-digit increasing numbers, records back to back. A new
//                     segment starts once the current one would exceed segBytes (an item larger
//                     than segBytes gets a segment of its own).
//   record            u32 payload length | u32 CRC32 (zlib.crc32) of the payload | payload
//   COMMIT            JSON {"seg": N, "offset": bytes}: every record before offset in segment N
//                     (and in earlier segments) is acknowledged. Written to COMMIT.tmp, then renamed.
//   LOCK              the process using the directory (dir-lock.ts).
// At open, segments before the commit are deleted and the rest are scanned: a segment is truncated
// at its first torn or corrupt record (a crash mid-write), counted in `corrupt`. Segments wholly
// acknowledged are deleted as acks arrive (never the one being written). The position reached by
// dropping items is written down lazily (when it passes a segment, on ack, on close): after a crash
// some dropped items may come back.

import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  truncateSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { lockDir, unlockDir } from "./dir-lock.ts";

const HEADER = 8;
const MAX_ITEM = 0xffffffff;
const READ_CHUNK = 64 * 1024;
const SEGMENT_NAME = /^(\d{12})\.seg$/;
const COMMIT = "COMMIT";
const COMMIT_TMP = "COMMIT.tmp";

export interface ReplayQueueOptions {
  /** Directory of the on-disk cache (created if missing); undefined: memory only. */
  dir?: string;
  /** Largest size of one segment file in bytes. */
  segBytes: number;
  /** Bound on the bytes of items held (appended, not acknowledged); oldest unpopped items are dropped beyond it. */
  maxTotalBytes: number;
}

export interface PoppedBatch {
  readonly items: Buffer[];
  /** Pass to ack() once every item of this batch (and every earlier batch) is done. */
  readonly ackRef: number;
}

/** A popped batch not acknowledged yet, or (ref 0) a run of dropped items; mark: where it ends on disk. */
interface Pending {
  readonly ref: number;
  readonly bytes: number;
  mark: Position | null;
}

export class ReplayQueue {
  private readonly pending = new Fifo<Pending>();
  private nextRef = 1;
  private lastAcked = 0;
  private closed = false;
  private droppedCount = 0;

  private constructor(
    private readonly store: Store,
    private readonly maxTotalBytes: number,
    /** Items appended and not popped. */
    private unpopped: number,
    /** Payload bytes appended and not acknowledged. */
    private held: number,
    private readonly corruptCount: number,
  ) {}

  static open(opts: ReplayQueueOptions): ReplayQueue {
    if (!Number.isInteger(opts.segBytes) || opts.segBytes <= 0) {
      throw new RangeError(`ReplayQueue segBytes must be a positive integer, got ${opts.segBytes}`);
    }
    if (!(opts.maxTotalBytes > 0)) {
      throw new RangeError(`ReplayQueue maxTotalBytes must be positive, got ${opts.maxTotalBytes}`);
    }
    if (opts.dir === undefined) return new ReplayQueue(new MemoryStore(), opts.maxTotalBytes, 0, 0, 0);
    const d = DiskStore.open(opts.dir, opts.segBytes);
    return new ReplayQueue(d.store, opts.maxTotalBytes, d.count, d.bytes, d.corrupt);
  }

  /** Items appended and not yet popped. */
  get count(): number {
    return this.unpopped;
  }

  /** Bytes of the items not yet acknowledged (popped or not). */
  get bytes(): number {
    return this.held;
  }

  /** Items dropped by the bound since open. */
  get dropped(): number {
    return this.droppedCount;
  }

  /** Corrupt records cut at open (disk mode). */
  get corrupt(): number {
    return this.corruptCount;
  }

  append(item: Buffer): void {
    this.check();
    if (item.length > MAX_ITEM) throw new RangeError(`ReplayQueue item too large: ${item.length} bytes`);
    while (this.unpopped > 0 && this.held + item.length > this.maxTotalBytes) this.dropOldest();
    this.store.append(item);
    this.unpopped++;
    this.held += item.length;
  }

  /** Up to countLimit items and bytesLimit bytes from the head (always at least one item when any is queued, even past bytesLimit); null when empty. Popped items are not returned again by pop() in this process, but are returned again after a restart (open) until acknowledged. */
  pop(countLimit: number, bytesLimit: number): PoppedBatch | null {
    this.check();
    if (this.unpopped === 0) return null;
    const items: Buffer[] = [];
    let size = 0;
    do {
      const len = this.store.nextLength();
      if (items.length > 0 && size + len > bytesLimit) break;
      items.push(this.store.next(true)!);
      size += len;
      this.unpopped--;
    } while (this.unpopped > 0 && items.length < countLimit);
    const ackRef = this.nextRef++;
    this.pending.push({ ref: ackRef, bytes: size, mark: this.store.mark() });
    return { items, ackRef };
  }

  /** Acknowledges every popped item up to and including the batch of `ackRef` (refs are monotonic; an older ref after a newer one is a no-op). */
  ack(ackRef: number): void {
    this.check();
    if (ackRef <= this.lastAcked) return;
    this.lastAcked = Math.min(ackRef, this.nextRef - 1);
    let done: Pending | undefined;
    // Runs of dropped items (ref 0) behind an acknowledged batch are released with it.
    while (this.pending.length > 0 && this.pending.peek()!.ref <= ackRef) {
      done = this.pending.shift()!;
      this.held -= done.bytes;
    }
    if (done !== undefined) this.store.release(done.mark, true);
  }

  /** Closes files (disk mode); the queue is unusable afterwards. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.store.close();
  }

  private dropOldest(): void {
    const len = this.store.nextLength();
    this.store.next(false);
    this.unpopped--;
    this.held -= len;
    this.droppedCount++;
    const mark = this.store.mark();
    const last = this.pending.last();
    if (last === undefined) this.store.release(mark, false);
    else if (last.ref === 0) last.mark = mark;
    else this.pending.push({ ref: 0, bytes: 0, mark });
  }

  private check(): void {
    if (this.closed) throw new Error("ReplayQueue is closed");
  }
}

/** Where the items live. The queue keeps the counts, batches and bound. */
interface Store {
  append(item: Buffer): void;
  /** Payload length of the oldest unpopped item (one exists). */
  nextLength(): number;
  /** Removes the oldest unpopped item, returning it when `read` (else it is skipped unread). */
  next(read: boolean): Buffer | undefined;
  /** The read position (disk mode), to release up to later. */
  mark(): Position | null;
  /** Everything before `mark` is acknowledged; unless `persist`, writing that down may be deferred. */
  release(mark: Position | null, persist: boolean): void;
  close(): void;
}

class MemoryStore implements Store {
  private readonly items = new Fifo<Buffer>();

  append(item: Buffer): void {
    this.items.push(item);
  }

  nextLength(): number {
    return this.items.peek()!.length;
  }

  next(): Buffer | undefined {
    return this.items.shift();
  }

  mark(): null {
    return null;
  }

  release(): void {}

  close(): void {
    while (this.items.length > 0) this.items.shift();
  }
}

interface Segment {
  readonly no: number;
  /** File size in bytes. */
  size: number;
  next: Segment | null;
}

interface Position {
  readonly seg: Segment;
  readonly off: number;
}

/** A disk store opened, with what it holds. */
interface OpenedStore {
  store: DiskStore;
  count: number;
  bytes: number;
  corrupt: number;
}

class DiskStore implements Store {
  private tailFd: number;
  private commit: Position;
  private commitDirty = false;
  private reader: SegmentReader;
  private readOff: number;

  private constructor(
    private readonly dir: string,
    private readonly segBytes: number,
    /** Oldest segment kept; segments are linked from here to tail. */
    private head: Segment,
    /** The segment being written. */
    private tail: Segment,
    startOff: number,
  ) {
    this.tailFd = openSync(this.path(tail.no), "a");
    this.commit = { seg: head, off: startOff };
    this.writeCommit();
    this.reader = new SegmentReader(head, this.path(head.no));
    this.readOff = startOff;
    this.advanceReader();
  }

  static open(dir: string, segBytes: number): OpenedStore {
    mkdirSync(dir, { recursive: true });
    lockDir(dir);
    try {
      return DiskStore.load(dir, segBytes);
    } catch (err) {
      unlockDir(dir);
      throw err;
    }
  }

  private static load(dir: string, segBytes: number): OpenedStore {
    rmSync(join(dir, COMMIT_TMP), { force: true });
    const saved = readCommit(dir);
    const nos: number[] = [];
    for (const name of readdirSync(dir)) {
      const m = SEGMENT_NAME.exec(name);
      if (m !== null) nos.push(Number(m[1]));
    }
    nos.sort((a, b) => a - b);
    let head: Segment | null = null;
    let tail: Segment | null = null;
    let startOff = 0;
    let count = 0;
    let bytes = 0;
    let corrupt = 0;
    for (const no of nos) {
      const path = join(dir, segmentName(no));
      if (saved !== undefined && no < saved.seg) {
        unlinkSync(path);
        continue;
      }
      const seg: Segment = { no, size: statSync(path).size, next: null };
      const from = saved !== undefined && no === saved.seg ? Math.min(saved.offset, seg.size) : 0;
      const scan = scanSegment(seg, path, from);
      count += scan.count;
      bytes += scan.bytes;
      if (scan.corrupt) corrupt++;
      if (tail === null) {
        head = seg;
        startOff = from;
      } else tail.next = seg;
      tail = seg;
    }
    if (head === null || tail === null) {
      head = tail = { no: saved === undefined ? 1 : saved.seg + 1, size: 0, next: null };
      startOff = 0;
    }
    return { store: new DiskStore(dir, segBytes, head, tail, startOff), count, bytes, corrupt };
  }

  append(item: Buffer): void {
    const size = HEADER + item.length;
    if (this.tail.size > 0 && this.tail.size + size > this.segBytes) this.roll();
    const rec = Buffer.allocUnsafe(size);
    rec.writeUInt32BE(item.length, 0);
    rec.writeUInt32BE(crc32(item), 4);
    item.copy(rec, HEADER);
    try {
      let done = 0;
      while (done < size) done += writeSync(this.tailFd, rec, done, size - done);
    } catch (err) {
      try {
        ftruncateSync(this.tailFd, this.tail.size); // no torn record left behind
      } catch {}
      throw err;
    }
    this.tail.size += size;
  }

  nextLength(): number {
    return this.reader.view(this.readOff, HEADER).readUInt32BE(0);
  }

  next(read: boolean): Buffer | undefined {
    const len = this.nextLength();
    const item = read ? this.reader.copy(this.readOff + HEADER, len) : undefined;
    this.readOff += HEADER + len;
    this.advanceReader();
    return item;
  }

  mark(): Position {
    return { seg: this.reader.seg, off: this.readOff };
  }

  release(mark: Position | null, persist: boolean): void {
    if (mark === null) return;
    let { seg, off } = mark;
    while (off === seg.size && seg !== this.tail) {
      seg = seg.next!;
      off = 0;
    }
    const passed = seg !== this.commit.seg;
    this.commit = { seg, off };
    if (!persist && !passed) {
      this.commitDirty = true;
      return;
    }
    this.writeCommit();
    while (this.head !== seg) {
      unlinkSync(this.path(this.head.no));
      this.head = this.head.next!;
    }
  }

  close(): void {
    try {
      if (this.commitDirty) this.writeCommit();
      this.reader.close();
      closeSync(this.tailFd);
    } finally {
      unlockDir(this.dir);
    }
  }

  /** Starts a new segment after the tail. */
  private roll(): void {
    const seg: Segment = { no: this.tail.no + 1, size: 0, next: null };
    const fd = openSync(this.path(seg.no), "a");
    closeSync(this.tailFd);
    this.tailFd = fd;
    this.tail.next = seg;
    this.tail = seg;
    this.advanceReader();
  }

  /** Moves the read position off the end of a finished segment. */
  private advanceReader(): void {
    while (this.readOff === this.reader.seg.size && this.reader.seg !== this.tail) {
      const seg = this.reader.seg.next!;
      this.reader.close();
      this.reader = new SegmentReader(seg, this.path(seg.no));
      this.readOff = 0;
    }
  }

  private writeCommit(): void {
    const tmp = join(this.dir, COMMIT_TMP);
    writeFileSync(tmp, JSON.stringify({ seg: this.commit.seg.no, offset: this.commit.off }));
    renameSync(tmp, join(this.dir, COMMIT));
    this.commitDirty = false;
  }

  private path(no: number): string {
    return join(this.dir, segmentName(no));
  }
}

/** Reads one segment file through a read-ahead chunk. */
class SegmentReader {
  private readonly fd: number;
  private chunk: Buffer = Buffer.alloc(0);
  private chunkStart = 0;

  constructor(
    readonly seg: Segment,
    path: string,
  ) {
    this.fd = openSync(path, "r");
  }

  /** `len` bytes at `off`; the view is valid until the next call. */
  view(off: number, len: number): Buffer {
    const start = off - this.chunkStart;
    if (start >= 0 && start + len <= this.chunk.length) return this.chunk.subarray(start, start + len);
    if (len > READ_CHUNK / 2) return this.read(off, len);
    this.chunk = this.read(off, Math.max(len, Math.min(READ_CHUNK, this.seg.size - off)));
    this.chunkStart = off;
    return this.chunk.subarray(0, len);
  }

  /** `len` bytes at `off`, in a Buffer of their own. */
  copy(off: number, len: number): Buffer {
    return len > READ_CHUNK / 2 ? this.read(off, len) : Buffer.from(this.view(off, len));
  }

  close(): void {
    closeSync(this.fd);
  }

  private read(off: number, len: number): Buffer {
    const buf = Buffer.allocUnsafeSlow(len);
    let done = 0;
    while (done < len) {
      const n = readSync(this.fd, buf, done, len - done, off + done);
      if (n === 0) throw new Error(`ReplayQueue: short read in segment ${this.seg.no}`);
      done += n;
    }
    return buf;
  }
}

/** Counts the records of `seg` from `from`, truncating the file at the first torn or corrupt one. */
function scanSegment(seg: Segment, path: string, from: number): { count: number; bytes: number; corrupt: boolean } {
  const reader = new SegmentReader(seg, path);
  let off = from;
  let count = 0;
  let bytes = 0;
  try {
    while (off < seg.size) {
      if (off + HEADER > seg.size) break;
      const header = reader.view(off, HEADER);
      const len = header.readUInt32BE(0);
      const crc = header.readUInt32BE(4);
      if (off + HEADER + len > seg.size || crc32(reader.view(off + HEADER, len)) !== crc) break;
      off += HEADER + len;
      count++;
      bytes += len;
    }
  } finally {
    reader.close();
  }
  const corrupt = off < seg.size;
  if (corrupt) {
    truncateSync(path, off);
    seg.size = off;
  }
  return { count, bytes, corrupt };
}

function readCommit(dir: string): { seg: number; offset: number } | undefined {
  let text: string;
  try {
    text = readFileSync(join(dir, COMMIT), "utf8");
  } catch {
    return undefined;
  }
  try {
    const c = JSON.parse(text) as { seg?: unknown; offset?: unknown };
    if (Number.isSafeInteger(c.seg) && Number.isSafeInteger(c.offset)) {
      const seg = c.seg as number;
      const offset = c.offset as number;
      if (seg >= 0 && offset >= 0) return { seg, offset };
    }
  } catch {}
  return undefined; // unreadable: everything is replayed
}

function segmentName(no: number): string {
  return String(no).padStart(12, "0") + ".seg";
}

/** FIFO over an array with a head index (no Array.shift): the consumed prefix is cut once it is half the array. */
class Fifo<T> {
  private items: (T | undefined)[] = [];
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  last(): T | undefined {
    return this.head < this.items.length ? this.items[this.items.length - 1] : undefined;
  }

  shift(): T | undefined {
    if (this.head === this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined;
    if (this.head === this.items.length) {
      this.items = [];
      this.head = 0;
    } else if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return item;
  }
}
