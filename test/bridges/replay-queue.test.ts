import { spawn } from "node:child_process";
import { once } from "node:events";
import {
  appendFileSync,
  existsSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  truncateSync,
  writeFileSync,
} from "node:fs";
import { hostname, tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { ReplayQueue, type ReplayQueueOptions } from "../../src/bridges/replay-queue.ts";

let dir: string;
const opened: ReplayQueue[] = [];

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "replayq-"));
});

afterEach(() => {
  for (const q of opened.splice(0)) q.close();
  rmSync(dir, { recursive: true, force: true });
});

function open(opts: ReplayQueueOptions): ReplayQueue {
  const q = ReplayQueue.open(opts);
  opened.push(q);
  return q;
}

/** Closes `q` and opens the same dir again. */
function reopen(q: ReplayQueue, opts: Partial<ReplayQueueOptions> = {}): ReplayQueue {
  q.close();
  return open({ dir, segBytes: 1 << 20, maxTotalBytes: 1 << 30, ...opts });
}

const item = (i: number, size = 8) => Buffer.from(String(i).padStart(size, "0"));
const texts = (items: Buffer[]) => items.map((b) => b.toString());
const range = (from: number, to: number, size = 8) =>
  Array.from({ length: to - from }, (_, i) => item(from + i, size).toString());

function drain(q: ReplayQueue, count = 1000, bytes = 1 << 30): string[] {
  const out: string[] = [];
  for (let b = q.pop(count, bytes); b !== null; b = q.pop(count, bytes)) {
    out.push(...texts(b.items));
    q.ack(b.ackRef);
  }
  return out;
}

const segments = () =>
  readdirSync(dir)
    .filter((n) => n.endsWith(".seg"))
    .sort();

describe.each([
  ["memory", () => undefined],
  ["disk", () => dir],
])("ReplayQueue (%s)", (_mode, dirOf) => {
  const make = (opts: Partial<ReplayQueueOptions> = {}) =>
    open({ dir: dirOf(), segBytes: 64, maxTotalBytes: 1 << 20, ...opts });

  it("keeps order across batches and counts items and bytes", () => {
    const q = make();
    expect(q.pop(10, 1000)).toBeNull();
    for (let i = 0; i < 50; i++) q.append(item(i));
    expect(q.count).toBe(50);
    expect(q.bytes).toBe(400);
    const b = q.pop(7, 1 << 20)!;
    expect(texts(b.items)).toEqual(range(0, 7));
    expect(q.count).toBe(43);
    expect(q.bytes).toBe(400); // popped, not acknowledged
    q.ack(b.ackRef);
    expect(q.bytes).toBe(344);
    for (let i = 50; i < 60; i++) q.append(item(i));
    expect(drain(q, 9)).toEqual(range(7, 60));
    expect(q.count).toBe(0);
    expect(q.bytes).toBe(0);
    expect(q.pop(10, 1000)).toBeNull();
    expect(q.dropped).toBe(0);
    expect(q.corrupt).toBe(0);
  });

  it("honours count and byte limits; an oversize item comes alone", () => {
    const q = make();
    for (let i = 0; i < 5; i++) q.append(item(i));
    q.append(Buffer.alloc(100, 1));
    q.append(item(6));
    expect(texts(q.pop(2, 1000)!.items)).toEqual(range(0, 2));
    expect(texts(q.pop(10, 20)!.items)).toEqual(range(2, 4)); // a third would make 24 bytes
    expect(texts(q.pop(10, 20)!.items)).toEqual(range(4, 5)); // the big one does not fit after it
    const big = q.pop(10, 20)!.items;
    expect(big).toHaveLength(1);
    expect(big[0].equals(Buffer.alloc(100, 1))).toBe(true);
    expect(texts(q.pop(0, 0)!.items)).toEqual(range(6, 7)); // at least one item
    expect(q.pop(10, 20)).toBeNull();
  });

  it("appends and pops empty items", () => {
    const q = make();
    q.append(Buffer.alloc(0));
    q.append(item(1));
    const b = q.pop(10, 100)!;
    expect(b.items.map((x) => x.length)).toEqual([0, 8]);
  });

  it("drops the oldest unpopped items beyond maxTotalBytes", () => {
    const q = make({ maxTotalBytes: 80 });
    for (let i = 0; i < 15; i++) q.append(item(i));
    expect(q.dropped).toBe(5);
    expect(q.count).toBe(10);
    expect(q.bytes).toBe(80);
    // popped but unacknowledged items are held, not dropped
    const b = q.pop(3, 1000)!;
    expect(texts(b.items)).toEqual(range(5, 8));
    q.append(item(15));
    q.append(item(16));
    expect(q.dropped).toBe(7);
    expect(q.bytes).toBe(80);
    q.ack(b.ackRef);
    expect(q.bytes).toBe(56);
    expect(drain(q)).toEqual(range(10, 17));
    expect(q.bytes).toBe(0);
  });

  it("keeps an item larger than the bound, dropping everything unpopped before it", () => {
    const q = make({ maxTotalBytes: 20 });
    q.append(item(0));
    q.append(Buffer.alloc(30));
    expect(q.dropped).toBe(1);
    expect(q.count).toBe(1);
    expect(q.bytes).toBe(30);
  });

  it("ignores an ack with an older ref", () => {
    const q = make();
    for (let i = 0; i < 6; i++) q.append(item(i));
    const b1 = q.pop(2, 1000)!;
    const b2 = q.pop(2, 1000)!;
    expect(b2.ackRef).toBeGreaterThan(b1.ackRef);
    q.ack(b2.ackRef); // acknowledges b1 as well
    expect(q.bytes).toBe(16);
    q.ack(b1.ackRef);
    expect(q.bytes).toBe(16);
    const b3 = q.pop(2, 1000)!;
    q.ack(b1.ackRef);
    expect(q.bytes).toBe(16);
    q.ack(b3.ackRef);
    expect(q.bytes).toBe(0);
  });

  it("throws once closed", () => {
    const q = make();
    q.close();
    expect(() => q.append(item(0))).toThrow(/closed/);
    expect(() => q.pop(1, 1)).toThrow(/closed/);
    q.close();
  });
});

describe("ReplayQueue memory mode", () => {
  it("moves 100k small items through in order", () => {
    const q = open({ segBytes: 1024, maxTotalBytes: 1 << 30 });
    const n = 100_000;
    let next = 0;
    let expected = 0;
    let ok = true;
    // keep a backlog while appending and popping, then drain
    for (let i = 0; i < n; i++) {
      q.append(item(next++));
      if (i % 3 === 0) {
        const b = q.pop(2, 1 << 20)!;
        for (const x of b.items) ok &&= x.toString() === item(expected++).toString();
        q.ack(b.ackRef);
      }
    }
    expect(q.count).toBe(n - expected);
    for (let b = q.pop(100, 1 << 20); b !== null; b = q.pop(100, 1 << 20)) {
      for (const x of b.items) ok &&= x.toString() === item(expected++).toString();
      q.ack(b.ackRef);
    }
    expect(ok).toBe(true);
    expect(expected).toBe(n);
    expect(q.bytes).toBe(0);
  });

  it("drops through a long run under the bound", () => {
    const q = open({ segBytes: 1024, maxTotalBytes: 8 * 1000 });
    for (let i = 0; i < 100_000; i++) q.append(item(i));
    expect(q.dropped).toBe(99_000);
    expect(q.count).toBe(1000);
    expect(drain(q)).toEqual(range(99_000, 100_000));
  });
});

describe("ReplayQueue disk mode", () => {
  const opts = (o: Partial<ReplayQueueOptions> = {}): ReplayQueueOptions => ({
    dir,
    segBytes: 1 << 20,
    maxTotalBytes: 1 << 30,
    ...o,
  });

  it("creates the dir and returns unacknowledged items after a restart", () => {
    const sub = join(dir, "nested", "q");
    let q = open(opts({ dir: sub }));
    for (let i = 0; i < 10; i++) q.append(item(i));
    q.ack(q.pop(3, 1000)!.ackRef);
    expect(texts(q.pop(3, 1000)!.items)).toEqual(range(3, 6)); // popped, never acknowledged
    q = reopen(q, { dir: sub });
    expect(q.count).toBe(7);
    expect(q.bytes).toBe(56);
    expect(q.corrupt).toBe(0);
    const b = q.pop(2, 1000)!;
    expect(texts(b.items)).toEqual(range(3, 5));
    q.ack(b.ackRef);
    q.append(item(10));
    q = reopen(q, { dir: sub });
    expect(drain(q, 4)).toEqual(range(5, 11));
    q = reopen(q, { dir: sub });
    expect(q.count).toBe(0);
    expect(q.pop(10, 1000)).toBeNull();
  });

  it("rolls segments at segBytes and deletes acknowledged ones", () => {
    // records are 8 + 20 bytes: three per 100-byte segment
    let q = open(opts({ segBytes: 100 }));
    for (let i = 0; i < 10; i++) q.append(item(i, 20));
    expect(segments()).toHaveLength(4);
    for (const s of segments().slice(0, 3)) expect(statSync(join(dir, s)).size).toBe(84);
    q.append(Buffer.alloc(300, 7)); // larger than segBytes: a segment of its own
    q.append(item(10, 20));
    const sizes = segments().map((s) => statSync(join(dir, s)).size);
    expect(sizes).toEqual([84, 84, 84, 28, 308, 28]);

    const b = q.pop(4, 1 << 20)!;
    expect(texts(b.items)).toEqual(range(0, 4, 20));
    expect(segments()).toHaveLength(6); // not acknowledged yet
    q.ack(b.ackRef);
    expect(segments()).toHaveLength(5); // first segment fully acknowledged, second not
    q.ack(q.pop(6, 1 << 20)!.ackRef);
    expect(segments()).toHaveLength(2);

    q = reopen(q, { segBytes: 100 });
    expect(q.count).toBe(2);
    const rest = q.pop(10, 1 << 20)!;
    expect(rest.items[0].equals(Buffer.alloc(300, 7))).toBe(true);
    expect(rest.items[1].toString()).toBe(item(10, 20).toString());
    q.ack(rest.ackRef);
    expect(segments()).toHaveLength(1); // the segment being written stays
    q.append(item(11, 20));
    q = reopen(q, { segBytes: 100 });
    expect(drain(q)).toEqual(range(11, 12, 20));
  });

  it("writes the record format of the header comment", () => {
    const q = open(opts());
    q.append(Buffer.from("hello"));
    q.close();
    const [seg] = segments();
    expect(seg).toMatch(/^\d{12}\.seg$/);
    const data = readFileSync(join(dir, seg));
    expect(data.length).toBe(13);
    expect(data.readUInt32BE(0)).toBe(5);
    expect(data.subarray(8).toString()).toBe("hello");
    expect(JSON.parse(readFileSync(join(dir, "COMMIT"), "utf8"))).toEqual({ seg: Number(seg.slice(0, 12)), offset: 0 });
  });

  it("cuts garbage appended to the last segment", () => {
    let q = open(opts());
    for (let i = 0; i < 5; i++) q.append(item(i));
    q.close();
    const last = join(dir, segments().at(-1)!);
    const size = statSync(last).size;
    appendFileSync(last, Buffer.from([0, 0, 0, 3, 1, 2, 3, 4, 9, 9, 9])); // a whole record with a bad CRC
    q = open(opts());
    expect(q.corrupt).toBe(1);
    expect(q.count).toBe(5);
    expect(statSync(last).size).toBe(size);
    q.append(item(5));
    q = reopen(q);
    expect(q.corrupt).toBe(0);
    expect(drain(q, 2)).toEqual(range(0, 6));
  });

  it("cuts a torn last record", () => {
    let q = open(opts({ segBytes: 40 }));
    for (let i = 0; i < 5; i++) q.append(item(i)); // 16-byte records, two per segment
    q.close();
    const last = join(dir, segments().at(-1)!);
    truncateSync(last, statSync(last).size - 3);
    q = open(opts({ segBytes: 40 }));
    expect(q.corrupt).toBe(1);
    expect(q.count).toBe(4);
    expect(statSync(last).size).toBe(0);
    q.append(item(9));
    q = reopen(q, { segBytes: 40 });
    expect(drain(q)).toEqual([...range(0, 4), item(9).toString()]);
  });

  it("cuts a record with a flipped payload byte and a torn header", () => {
    let q = open(opts());
    for (let i = 0; i < 3; i++) q.append(item(i));
    q.close();
    const last = join(dir, segments().at(-1)!);
    const data = readFileSync(last);
    data[data.length - 1] ^= 0xff;
    writeFileSync(last, data);
    q = open(opts());
    expect(q.corrupt).toBe(1);
    expect(q.count).toBe(2);
    q.close();
    appendFileSync(last, Buffer.from([0, 0])); // half a header
    q = open(opts());
    expect(q.corrupt).toBe(1);
    expect(drain(q)).toEqual(range(0, 2));
  });

  it("drops past the bound and does not bring dropped items back after a restart", () => {
    let q = open(opts({ segBytes: 50, maxTotalBytes: 80 }));
    for (let i = 0; i < 30; i++) q.append(item(i));
    expect(q.dropped).toBe(20);
    expect(q.count).toBe(10);
    expect(segments().length).toBeLessThanOrEqual(4); // dropped segments are deleted
    q = reopen(q, { segBytes: 50, maxTotalBytes: 80 });
    expect(q.dropped).toBe(0);
    expect(q.count).toBe(10);
    expect(drain(q)).toEqual(range(20, 30));
  });

  it("releases items dropped behind a popped batch once that batch is acknowledged", () => {
    let q = open(opts({ segBytes: 50, maxTotalBytes: 80 }));
    for (let i = 0; i < 10; i++) q.append(item(i));
    const b = q.pop(2, 1000)!;
    for (let i = 10; i < 14; i++) q.append(item(i)); // drops 2..5
    expect(q.dropped).toBe(4);
    q = reopen(q, { segBytes: 50, maxTotalBytes: 1 << 20 });
    // nothing was acknowledged: the popped batch and the dropped items come back
    expect(q.count).toBe(14);
    q = reopen(q, { segBytes: 50, maxTotalBytes: 80 });
    const b2 = q.pop(2, 1000)!;
    expect(texts(b2.items)).toEqual(range(0, 2));
    for (let i = 14; i < 18; i++) q.append(item(i)); // drops 2..9: 8 unpopped items fit beside the batch
    expect(q.dropped).toBe(8);
    q.ack(b2.ackRef);
    q = reopen(q, { segBytes: 50, maxTotalBytes: 80 });
    expect(drain(q)).toEqual(range(10, 18));
    expect(b.items).toHaveLength(2);
  });

  it("moves many items through small segments", () => {
    let q = open(opts({ segBytes: 4096 }));
    let expected = 0;
    const out: string[] = [];
    for (let i = 0; i < 20_000; i++) {
      q.append(item(i));
      if (i % 4 === 0) {
        const b = q.pop(3, 1 << 20)!;
        out.push(...texts(b.items));
        q.ack(b.ackRef);
      }
    }
    expected = out.length;
    expect(out).toEqual(range(0, expected));
    expect(segments().length).toBeLessThanOrEqual(Math.ceil(((20_000 - expected) * 16) / 4096) + 2);
    q = reopen(q, { segBytes: 4096 });
    expect(q.count).toBe(20_000 - expected);
    expect(drain(q, 500)).toEqual(range(expected, 20_000));
  });
});

describe("ReplayQueue disk mode: one user per directory", () => {
  const opts = (): ReplayQueueOptions => ({ dir, segBytes: 1 << 20, maxTotalBytes: 1 << 30 });
  const lock = () => join(dir, "LOCK");

  it("refuses a second queue on a directory in use here, and frees it on close", () => {
    const q = open(opts());
    expect(readFileSync(lock(), "utf8")).toBe(`${process.pid}@${hostname()}\n`);
    expect(() => ReplayQueue.open(opts())).toThrow(`cache directory ${dir} is already in use in this process`);
    q.append(item(1));
    q.close();
    expect(existsSync(lock())).toBe(false);
    expect(drain(open(opts()))).toEqual([item(1).toString()]);
  });

  it("refuses a directory another live process of this host holds; takes it over once that process is gone", async () => {
    const other = spawn(process.execPath, ["-e", "setInterval(() => {}, 1000)"], { stdio: "ignore" });
    try {
      writeFileSync(lock(), `${other.pid}@${hostname()}\n`);
      expect(() => ReplayQueue.open(opts())).toThrow(`cache directory ${dir} is in use by process ${other.pid}`);
      expect(readFileSync(lock(), "utf8")).toBe(`${other.pid}@${hostname()}\n`); // left as it was
    } finally {
      const exited = once(other, "exit");
      other.kill();
      await exited;
    }
    open(opts());
    expect(readFileSync(lock(), "utf8")).toBe(`${process.pid}@${hostname()}\n`);
  });

  it("takes over a LOCK of this pid not held here (a restarted container) or of another host", () => {
    for (const stale of [`${process.pid}@${hostname()}`, `1@another-${hostname()}`, "garbage"]) {
      writeFileSync(lock(), `${stale}\n`);
      const q = ReplayQueue.open(opts());
      expect(readFileSync(lock(), "utf8")).toBe(`${process.pid}@${hostname()}\n`);
      q.close();
    }
  });
});
