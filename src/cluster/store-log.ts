// The embedded store's durability: an append-only log in `<data_dir>/store/store.log`. Each write
// (a put, a delete or a whole transaction) appends one checksummed record; the records reach the
// disk with fsync on a short cadence (and at close), so a burst of API writes costs one fsync. At
// open the log is replayed (a torn or corrupt tail is dropped) and rewritten as a snapshot, and it
// is compacted again when it grows to several times the live set. Leased keys never get here.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { StoreError } from "./store-errors.ts";

const MAGIC = Buffer.from("svc-store 1\n", "utf8");
const BATCH = 1;
const SNAPSHOT_ENTRY = 2;
const REVISION = 3;
const OP_PUT = 1;
const OP_DEL = 2;

export type LogOp =
  | { op: "put"; key: string; value: Buffer; createRevision: number; version: number }
  | { op: "del"; key: string };

export interface LoggedEntry {
  value: Buffer;
  createRevision: number;
  modRevision: number;
  version: number;
}

export interface ReplayedState {
  revision: number;
  entries: Map<string, LoggedEntry>;
  /** Bytes dropped from the end of the log (a torn write of a crash, or corruption). */
  droppedBytes: number;
}

export class StoreLog {
  private fd: number;
  private records = 0;
  private fsyncTimer: NodeJS.Timeout | undefined;
  private readonly file: string;

  /** Opens (or creates) the log in `dir` and returns it with the state it holds. */
  static open(dir: string, fsyncIntervalMs: number): { log: StoreLog; state: ReplayedState } {
    mkdirSync(dir, { recursive: true });
    const file = join(dir, "store.log");
    const state = existsSync(file)
      ? replay(readFileSync(file), file)
      : { revision: 0, entries: new Map<string, LoggedEntry>(), droppedBytes: 0 };
    const log = new StoreLog(file, fsyncIntervalMs, state);
    return { log, state };
  }

  private constructor(
    file: string,
    private readonly fsyncIntervalMs: number,
    state: ReplayedState,
  ) {
    this.file = file;
    this.fd = this.rewrite(state.revision, state.entries);
  }

  /** Appends the persisted part of one write (made at `revision`). */
  append(revision: number, ops: readonly LogOp[]): void {
    if (ops.length === 0) return;
    writeSync(this.fd, frame(encodeBatch(revision, ops)));
    this.records++;
    this.scheduleFsync();
  }

  /** True when the log holds several times more records than live keys. */
  needsCompaction(liveKeys: number): boolean {
    return this.records > 1024 && this.records > liveKeys * 4;
  }

  /** Rewrites the log as a snapshot of `entries` at `revision`. */
  compact(revision: number, entries: Iterable<[string, LoggedEntry]>): void {
    this.clearFsync();
    closeSync(this.fd);
    this.fd = this.rewrite(revision, entries);
  }

  close(): void {
    this.clearFsync();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }

  private scheduleFsync(): void {
    if (this.fsyncTimer !== undefined) return;
    this.fsyncTimer = setTimeout(() => {
      this.fsyncTimer = undefined;
      fsyncSync(this.fd);
    }, this.fsyncIntervalMs);
    this.fsyncTimer.unref();
  }

  private clearFsync(): void {
    if (this.fsyncTimer !== undefined) clearTimeout(this.fsyncTimer);
    this.fsyncTimer = undefined;
  }

  /** Writes a snapshot to a temp file, fsyncs it, renames it over the log; returns an append fd. */
  private rewrite(revision: number, entries: Iterable<[string, LoggedEntry]>): number {
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, "w");
    const chunks: Buffer[] = [MAGIC, frame(encodeRevision(revision))];
    let n = 0;
    for (const [key, e] of entries) {
      chunks.push(frame(encodeSnapshotEntry(key, e)));
      n++;
      if (chunks.length >= 256) writeSync(fd, Buffer.concat(chunks.splice(0)));
    }
    writeSync(fd, Buffer.concat(chunks));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.file);
    syncDir(join(this.file, ".."));
    this.records = n;
    return openSync(this.file, "a");
  }
}

/** Makes a rename durable (the directory entry); not supported everywhere, hence best effort. */
function syncDir(dir: string): void {
  try {
    const fd = openSync(dir, "r");
    try {
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch {
    // Some platforms cannot fsync a directory; the data itself is already synced.
  }
}

// ---- encoding: [u32 length][u32 crc32][body] -----------------------------------------------------

function frame(body: Buffer): Buffer {
  const head = Buffer.allocUnsafe(8);
  head.writeUInt32BE(body.length, 0);
  head.writeUInt32BE(crc32(body), 4);
  return Buffer.concat([head, body]);
}

class Writer {
  readonly parts: Buffer[] = [];
  u8(n: number): void {
    this.parts.push(Buffer.from([n]));
  }
  f64(n: number): void {
    const b = Buffer.allocUnsafe(8);
    b.writeDoubleBE(n, 0);
    this.parts.push(b);
  }
  u32(n: number): void {
    const b = Buffer.allocUnsafe(4);
    b.writeUInt32BE(n, 0);
    this.parts.push(b);
  }
  bytes(b: Buffer): void {
    this.u32(b.length);
    this.parts.push(b);
  }
  done(): Buffer {
    return Buffer.concat(this.parts);
  }
}

class Reader {
  private off = 0;
  constructor(private readonly buf: Buffer) {}
  u8(): number {
    return this.buf.readUInt8(this.advance(1));
  }
  f64(): number {
    return this.buf.readDoubleBE(this.advance(8));
  }
  u32(): number {
    return this.buf.readUInt32BE(this.advance(4));
  }
  bytes(): Buffer {
    const len = this.u32();
    const at = this.advance(len);
    return Buffer.from(this.buf.subarray(at, at + len));
  }
  private advance(n: number): number {
    const at = this.off;
    if (at + n > this.buf.length) throw new RangeError("record too short");
    this.off += n;
    return at;
  }
}

function encodeBatch(revision: number, ops: readonly LogOp[]): Buffer {
  const w = new Writer();
  w.u8(BATCH);
  w.f64(revision);
  w.u32(ops.length);
  for (const op of ops) {
    w.u8(op.op === "put" ? OP_PUT : OP_DEL);
    w.bytes(Buffer.from(op.key, "utf8"));
    if (op.op === "put") {
      w.f64(op.createRevision);
      w.f64(op.version);
      w.bytes(op.value);
    }
  }
  return w.done();
}

function encodeSnapshotEntry(key: string, e: LoggedEntry): Buffer {
  const w = new Writer();
  w.u8(SNAPSHOT_ENTRY);
  w.f64(e.createRevision);
  w.f64(e.modRevision);
  w.f64(e.version);
  w.bytes(Buffer.from(key, "utf8"));
  w.bytes(e.value);
  return w.done();
}

function encodeRevision(revision: number): Buffer {
  const w = new Writer();
  w.u8(REVISION);
  w.f64(revision);
  return w.done();
}

function replay(buf: Buffer, file: string): ReplayedState {
  if (buf.length < MAGIC.length || !buf.subarray(0, MAGIC.length).equals(MAGIC)) {
    // Refuse rather than start empty: the owner decides what to do with an unknown file.
    throw new StoreError(`${file} is not a svc store log`);
  }
  const state: ReplayedState = { revision: 0, entries: new Map(), droppedBytes: 0 };
  let off = MAGIC.length;
  while (off < buf.length) {
    if (off + 8 > buf.length) break;
    const len = buf.readUInt32BE(off);
    const sum = buf.readUInt32BE(off + 4);
    if (off + 8 + len > buf.length) break;
    const body = buf.subarray(off + 8, off + 8 + len);
    if (crc32(body) !== sum || !applyRecord(state, body)) break;
    off += 8 + len;
  }
  state.droppedBytes = buf.length - off;
  return state;
}

/** Applies one record; false when it cannot be decoded. */
function applyRecord(state: ReplayedState, body: Buffer): boolean {
  try {
    const r = new Reader(body);
    const kind = r.u8();
    if (kind === REVISION) {
      state.revision = Math.max(state.revision, r.f64());
    } else if (kind === SNAPSHOT_ENTRY) {
      const createRevision = r.f64();
      const modRevision = r.f64();
      const version = r.f64();
      const key = r.bytes().toString("utf8");
      state.entries.set(key, { value: r.bytes(), createRevision, modRevision, version });
    } else if (kind === BATCH) {
      // Decode the whole batch before applying it: a transaction is applied entirely or not at all.
      const revision = r.f64();
      const n = r.u32();
      const ops: LogOp[] = [];
      for (let i = 0; i < n; i++) {
        const op = r.u8();
        const key = r.bytes().toString("utf8");
        if (op === OP_DEL) ops.push({ op: "del", key });
        else if (op === OP_PUT) {
          const createRevision = r.f64();
          const version = r.f64();
          ops.push({ op: "put", key, createRevision, version, value: r.bytes() });
        } else return false;
      }
      for (const op of ops) {
        if (op.op === "del") state.entries.delete(op.key);
        else {
          const { value, createRevision, version } = op;
          state.entries.set(op.key, { value, createRevision, modRevision: revision, version });
        }
      }
      state.revision = Math.max(state.revision, revision);
    } else return false;
    return true;
  } catch {
    return false;
  }
}
