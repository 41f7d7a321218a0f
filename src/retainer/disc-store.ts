// Retained messages in memory, made durable by an append-only log in `<data_dir>/retainer/`:
// each put or delete appends one record, the records of one turn of the event loop in one write
// at its end (a burst of retained publishes costs one system call, not one each); at open the log
// is replayed and rewritten compacted, and it is compacted again when it grows to several times
// the live set, in writes of about a megabyte. Payloads stay on this node's disk: they never go to
// the cluster store.

import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, renameSync, writeSync } from "node:fs";
import { join } from "node:path";
import type { Message, MessageProps } from "../broker/types.ts";
import { makeMessage } from "../broker/types.ts";
import { MemoryRetainedStore } from "./memory-store.ts";

const PUT = 1;
const DEL = 2;
/** Compaction writes the log in pieces of about this many bytes. */
const COMPACT_WRITE = 1 << 20;

export class DiscRetainedStore extends MemoryRetainedStore {
  private fd: number;
  private records = 0;
  /** Records appended in this turn of the event loop, written at its end. */
  private readonly pending: Buffer[] = [];
  private readonly file: string;

  constructor(dir: string) {
    super();
    mkdirSync(dir, { recursive: true });
    this.file = join(dir, "retained.log");
    if (existsSync(this.file)) this.replay(readFileSync(this.file));
    this.fd = this.compact();
  }

  override put(msg: Message): void {
    super.put(msg);
    this.append(encodePut(msg));
  }

  override delete(topic: string): boolean {
    const had = super.delete(topic);
    if (had) this.append(encodeDel(topic));
    return had;
  }

  override clear(): void {
    super.clear();
    closeSync(this.fd);
    this.fd = this.compact();
  }

  override async close(): Promise<void> {
    this.flush();
    fsyncSync(this.fd);
    closeSync(this.fd);
  }

  private append(buf: Buffer): void {
    if (this.pending.push(buf) === 1) process.nextTick(this.flushLater);
    this.records++;
    if (this.records > 1024 && this.records > this.size * 4) {
      closeSync(this.fd);
      this.fd = this.compact();
    }
  }

  private readonly flushLater = (): void => this.flush();

  /** Writes the records appended since the last flush. */
  private flush(): void {
    if (this.pending.length === 0) return;
    const bytes = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending);
    this.pending.length = 0;
    writeSync(this.fd, bytes);
  }

  /**
   * Rewrites the log with one record per live message (the records not yet written are in it
   * already, so they are dropped); returns the open descriptor.
   */
  private compact(): number {
    this.pending.length = 0;
    const tmp = `${this.file}.tmp`;
    const fd = openSync(tmp, "w");
    const chunk: Buffer[] = [];
    let bytes = 0;
    for (const topic of this.topics()) {
      const rec = encodePut(this.get(topic) as Message);
      chunk.push(rec);
      bytes += rec.length;
      if (bytes >= COMPACT_WRITE) {
        writeSync(fd, Buffer.concat(chunk, bytes));
        chunk.length = 0;
        bytes = 0;
      }
    }
    if (bytes > 0) writeSync(fd, Buffer.concat(chunk, bytes));
    fsyncSync(fd);
    closeSync(fd);
    renameSync(tmp, this.file);
    this.records = this.size;
    return openSync(this.file, "a");
  }

  private replay(buf: Buffer): void {
    let off = 0;
    while (off + 5 <= buf.length) {
      const len = buf.readUInt32BE(off);
      if (off + 4 + len > buf.length) break; // torn tail of a crash: ignore it
      const rec = buf.subarray(off + 4, off + 4 + len);
      off += 4 + len;
      if (rec[0] === DEL) super.delete(rec.subarray(1).toString("utf8"));
      else if (rec[0] === PUT) {
        const m = decodePut(rec);
        if (m !== null) super.put(m);
      }
    }
  }
}

function frame(body: Buffer): Buffer {
  const out = Buffer.allocUnsafe(4 + body.length);
  out.writeUInt32BE(body.length, 0);
  body.copy(out, 4);
  return out;
}

function encodeDel(topic: string): Buffer {
  return frame(Buffer.concat([Buffer.from([DEL]), Buffer.from(topic, "utf8")]));
}

interface Meta {
  t: string;
  q: 0 | 1 | 2;
  f: string;
  u?: string;
  h: string;
  ts: number;
  e: number;
  p?: Record<string, unknown>;
}

function encodePut(m: Message): Buffer {
  const props = m.properties === undefined ? undefined : ({ ...m.properties } as Record<string, unknown>);
  if (props?.correlationData instanceof Buffer)
    props.correlationData = { b64: props.correlationData.toString("base64") };
  const meta: Meta = {
    t: m.topic,
    q: m.qos,
    f: m.from,
    u: m.fromUsername,
    h: m.peerhost,
    ts: m.timestamp,
    e: m.expiresAt,
    p: props,
  };
  const metaBuf = Buffer.from(JSON.stringify(meta), "utf8");
  const head = Buffer.allocUnsafe(5);
  head[0] = PUT;
  head.writeUInt32BE(metaBuf.length, 1);
  return frame(Buffer.concat([head, metaBuf, m.payload]));
}

function decodePut(rec: Buffer): Message | null {
  try {
    const metaLen = rec.readUInt32BE(1);
    const meta = JSON.parse(rec.subarray(5, 5 + metaLen).toString("utf8")) as Meta;
    const payload = Buffer.from(rec.subarray(5 + metaLen));
    let props = meta.p as MessageProps | undefined;
    const cd = (meta.p as { correlationData?: { b64: string } } | undefined)?.correlationData;
    if (props !== undefined && cd !== undefined) props = { ...props, correlationData: Buffer.from(cd.b64, "base64") };
    const m = makeMessage({
      from: meta.f,
      fromUsername: meta.u,
      peerhost: meta.h,
      topic: meta.t,
      payload,
      qos: meta.q,
      retain: true,
      properties: props,
      now: meta.ts,
    });
    m.expiresAt = meta.e;
    return m;
  } catch {
    return null;
  }
}
