// The http/protobuf span processor (src/telemetry/otlp-batch-processor.ts): the SDK's
// BatchSpanProcessor rules (sampled spans only, a batch exported when full or after the schedule
// delay, one export at a time, a bounded queue that drops and says so, failures and timeouts
// reported, flush and shutdown) over spans encoded as they end. The exporter here is a recorder of
// the encoded requests it is handed (the HTTP transport is tested in otlp-proto.test.ts and through
// startTracingSdk); requests are decoded with the tests' own protobuf decoder.

import { afterEach, describe, expect, it } from "vitest";
import { RecordedSpan } from "../../src/telemetry/facade-span.ts";
import type { EncodedSpans } from "../../src/telemetry/otlp-batch.ts";
import {
  type BatchSettings,
  ENCODE_RUN,
  EncodingSpanProcessor,
  type ExportOutcome,
} from "../../src/telemetry/otlp-batch-processor.ts";
import { encodeTraceExportRequest, type OtlpSpan } from "../../src/telemetry/otlp-proto.ts";
import { SpanGroup } from "../../src/telemetry/span-group.ts";
import { batchSettingsFromEnv } from "../../src/tracing-sdk.ts";
import { type Decoded, decodeTraceRequest } from "./otlp-decode.ts";

const RESOURCE = { attributes: { "service.name": "svc" } };
const SCOPE = { name: "svc", version: "0.1.0" };
const PARENT = { traceId: "4bf92f3577b34da6a3ce929d0e0e4736", spanId: "00f067aa0ba902b7", traceFlags: 1 };

const SHARED = [{ "messaging.system": "mqtt" }];

/** A deliver span (the facade's RecordedSpan, whose resource type is the recorder's `unknown`). */
function span(n: number, sampled = true): OtlpSpan {
  const id = n.toString(16).padStart(16, "0");
  return new RecordedSpan(
    `deliver t/${n}`,
    3,
    { traceId: PARENT.traceId, spanId: id, traceFlags: sampled ? 1 : 0 },
    PARENT,
    [1_700_000_000, n],
    SHARED,
    { n },
    RESOURCE,
    SCOPE,
  ) as unknown as OtlpSpan;
}

/** A traced message's deliver spans as a group of `n` (span-group.ts). */
function group(n: number): SpanGroup {
  const g = new SpanGroup("deliver t/g", 3, PARENT, SHARED, RESOURCE, SCOPE);
  for (let i = 0; i < n; i++) g.add(Object.freeze({ sub: `c${i}` }));
  return g;
}

const spansOf = (g: SpanGroup): OtlpSpan[] =>
  Array.from({ length: g.length }, (_, i) => g.span(i) as unknown as OtlpSpan);

/**
 * An exporter that keeps a copy of each request (`handed`: the requests themselves, whose bytes the
 * processor reuses once answered) and answers when told (or at once, with `auto`).
 */
class Recorder {
  readonly batches: EncodedSpans[] = [];
  readonly handed: EncodedSpans[] = [];
  readonly pending: ((o: ExportOutcome) => void)[] = [];
  shutdowns = 0;
  private waiters: (() => void)[] = [];
  constructor(private readonly auto: ExportOutcome | null = { code: 0 }) {}

  export(batch: EncodedSpans, done: (o: ExportOutcome) => void): void {
    this.batches.push({ bytes: Buffer.from(batch.bytes), length: batch.length });
    this.handed.push(batch);
    if (this.auto !== null) done(this.auto);
    else this.pending.push(done);
    for (const w of this.waiters.splice(0)) w();
  }
  async shutdown(): Promise<void> {
    this.shutdowns++;
  }
  /** Resolves once `n` requests were handed over. */
  async exported(n: number): Promise<void> {
    while (this.batches.length < n) await new Promise<void>((r) => this.waiters.push(r));
  }
  names(i: number): string[] {
    const req = decodeTraceRequest(Buffer.from(this.batches[i].bytes));
    return req.resourceSpans.flatMap((r: Decoded) =>
      r.scopeSpans.flatMap((s: Decoded) => s.spans.map((x: Decoded) => x.name)),
    );
  }
}

class Report {
  readonly warnings: string[] = [];
  readonly errors: Error[] = [];
  warn = (m: string) => {
    this.warnings.push(m);
  };
  error = (e: Error) => {
    this.errors.push(e);
  };
}

const processors: EncodingSpanProcessor[] = [];
function make(exporter: Recorder, settings: Partial<BatchSettings>, report = new Report()) {
  const p = new EncodingSpanProcessor(exporter, settings, report);
  processors.push(p);
  return { p, report };
}

afterEach(async () => {
  for (const p of processors.splice(0)) await p.shutdown();
});

describe("EncodingSpanProcessor", () => {
  it("exports a batch as soon as it is full, the same request the whole-batch encoder writes", () => {
    const ex = new Recorder();
    const { p } = make(ex, { maxExportBatchSize: 3, scheduledDelayMillis: 60_000 });
    const spans = [1, 2, 3, 4].map((n) => span(n));
    p.onEnd(span(99, false)); // not sampled: never exported
    for (const s of spans) p.onEnd(s);
    expect(ex.batches.map((b) => b.length)).toEqual([3]);
    expect(Buffer.from(ex.batches[0].bytes).equals(encodeTraceExportRequest(spans.slice(0, 3)))).toBe(true);
    expect(ex.names(0)).toEqual(["deliver t/1", "deliver t/2", "deliver t/3"]);
  });

  it("exports a batch that is not full after the schedule delay", async () => {
    const ex = new Recorder();
    const { p } = make(ex, { maxExportBatchSize: 100, scheduledDelayMillis: 20 });
    p.onEnd(span(1));
    p.onEnd(span(2));
    expect(ex.batches).toHaveLength(0);
    await ex.exported(1);
    expect(ex.names(0)).toEqual(["deliver t/1", "deliver t/2"]);
    // The next span starts a new delay.
    p.onEnd(span(3));
    await ex.exported(2);
    expect(ex.names(1)).toEqual(["deliver t/3"]);
  });

  it("exports one batch at a time, and drops what exceeds the queue, saying how many", async () => {
    const ex = new Recorder(null); // a collector that has not answered yet
    const { p, report } = make(ex, { maxExportBatchSize: 2, maxQueueSize: 4, scheduledDelayMillis: 60_000 });
    for (let n = 1; n <= 7; n++) p.onEnd(span(n));
    // 1-2 in export, 3-4 waiting: the queue is full, 5-7 are dropped.
    expect(ex.batches).toHaveLength(1);
    ex.pending.shift()?.({ code: 0 });
    expect(ex.batches).toHaveLength(2); // 3-4 right after the first export ended
    p.onEnd(span(8));
    expect(report.warnings).toEqual(["Dropped 3 spans because maxQueueSize reached"]);
    ex.pending.shift()?.({ code: 0 });
    const flushed = p.forceFlush();
    expect(ex.batches).toHaveLength(3);
    ex.pending.shift()?.({ code: 0 });
    await flushed;
    expect([0, 1, 2].map((i) => ex.names(i))).toEqual([
      ["deliver t/1", "deliver t/2"],
      ["deliver t/3", "deliver t/4"],
      ["deliver t/8"],
    ]);
  });

  it("reports a failed or timed-out export and goes on with the next batch", async () => {
    const failing = new Recorder({ code: 1, error: new Error("collector said no") });
    const a = make(failing, { maxExportBatchSize: 1 });
    a.p.onEnd(span(1));
    a.p.onEnd(span(2));
    expect(failing.batches).toHaveLength(2);
    expect(a.report.errors.map((e) => e.message)).toEqual(["collector said no", "collector said no"]);

    const silent = new Recorder(null); // never answers
    const b = make(silent, { maxExportBatchSize: 1, exportTimeoutMillis: 30 });
    b.p.onEnd(span(3));
    b.p.onEnd(span(4));
    expect(silent.batches).toHaveLength(1);
    await silent.exported(2); // the second batch goes once the first timed out
    expect(b.report.errors.map((e) => e.message)).toEqual(["Timeout"]);
    silent.pending[0]({ code: 0 }); // a late answer changes nothing
    expect(b.report.errors).toHaveLength(1);
    silent.pending[1]({ code: 0 });
  });

  it("writes a request into the bytes of one exported with success, never into those of a failed or pending one", () => {
    const ex = new Recorder(null);
    const { p } = make(ex, { maxExportBatchSize: 1, scheduledDelayMillis: 60_000 });
    const memory = (i: number) => ex.handed[i].bytes.buffer;
    const answer = (o: ExportOutcome) => ex.pending.shift()?.(o);
    p.onEnd(span(1)); // exported at once (A)
    p.onEnd(span(2)); // waits (B)
    answer({ code: 0 }); // 1 succeeded: A is free; 2 goes
    p.onEnd(span(3)); // waits, in A
    answer({ code: 1, error: new Error("refused") }); // 2 failed: B is not reused; 3 goes
    expect(memory(2)).toBe(memory(0));
    p.onEnd(span(4)); // A pending, B failed: fresh memory (C)
    answer({ code: 0 }); // 3 succeeded: A is free; 4 goes
    expect(new Set([0, 1, 3].map(memory)).size).toBe(3);
    const done = ex.pending.shift();
    done?.({ code: 0 }); // 4 succeeded: C is free
    done?.({ code: 0 }); // a second answer to one request changes nothing
    p.onEnd(span(5)); // exported at once, in C (the last freed)
    p.onEnd(span(6)); // waits, in A
    answer({ code: 0 });
    answer({ code: 0 });
    expect([memory(4), memory(5)]).toEqual([memory(3), memory(0)]);
    expect(ex.batches.map((_, i) => ex.names(i))).toEqual([1, 2, 3, 4, 5, 6].map((n) => [`deliver t/${n}`]));
    // Bytes written again are those of reused memory only.
    const intact = ex.handed.map((h, i) => Buffer.from(h.bytes).equals(ex.batches[i].bytes));
    expect(intact).toEqual([false, true, false, false, true, true]);
  });

  it("flushes what is queued on forceFlush and shutdown, then takes no more spans", async () => {
    const ex = new Recorder();
    const { p } = make(ex, { maxExportBatchSize: 10, scheduledDelayMillis: 60_000 });
    p.onEnd(span(1));
    await p.forceFlush();
    expect(ex.batches.map((b) => b.length)).toEqual([1]);
    await p.forceFlush(); // nothing queued: resolves without an export
    p.onEnd(span(2));
    await p.shutdown();
    await p.shutdown();
    p.onEnd(span(3));
    expect(ex.batches.map((b) => b.length)).toEqual([1, 1]);
    expect(ex.shutdowns).toBe(1);
  });

  it("encodes finished spans a run at a time: a span that cannot be encoded is reported then, and left out", async () => {
    const ex = new Recorder();
    const { p, report } = make(ex, { maxExportBatchSize: 1000, scheduledDelayMillis: 60_000 });
    // A span whose context the processor can read when it ends, but the encoder not.
    const good = span(1);
    let reads = 0;
    const flaky = Object.assign(Object.create(Object.getPrototypeOf(good)), good, {
      spanContext: () => {
        if (reads++ > 0) throw new Error("no context");
        return good.spanContext();
      },
    }) as OtlpSpan;
    p.onEnd(flaky);
    for (let n = 2; n < ENCODE_RUN; n++) p.onEnd(span(n));
    expect(report.errors).toEqual([]); // held, not encoded yet
    p.onEnd(span(ENCODE_RUN));
    expect(report.errors.map((e) => e.message)).toEqual(["no context"]);
    expect(ex.batches).toHaveLength(0);
    await p.forceFlush();
    expect(ex.batches.map((b) => b.length)).toEqual([ENCODE_RUN - 1]);
    const names = Array.from({ length: ENCODE_RUN - 1 }, (_, i) => `deliver t/${i + 2}`);
    expect(ex.names(0)).toEqual(names);
  });

  it("keeps a batch no larger than the queue, as the SDK's processor", () => {
    const ex = new Recorder();
    const { p, report } = make(ex, { maxExportBatchSize: 10, maxQueueSize: 2, scheduledDelayMillis: 60_000 });
    p.onEnd(span(1));
    p.onEnd(span(2));
    expect(ex.batches.map((b) => b.length)).toEqual([2]);
    expect(report.warnings[0]).toMatch(/setting maxExportBatchSize to match maxQueueSize/);
  });

  it("splits a span group at the batch size, after the spans that came before it", async () => {
    const ex = new Recorder();
    const { p, report } = make(ex, { maxExportBatchSize: 4, scheduledDelayMillis: 60_000 });
    const before = span(1);
    const g = group(10);
    p.onEnd(before);
    p.onEndGroup(g);
    await p.forceFlush();
    expect(ex.batches.map((b) => b.length)).toEqual([4, 4, 3]);
    const all = [before, ...spansOf(g)];
    expect(ex.batches.map((b) => Buffer.from(b.bytes))).toEqual([
      encodeTraceExportRequest(all.slice(0, 4)),
      encodeTraceExportRequest(all.slice(4, 8)),
      encodeTraceExportRequest(all.slice(8)),
    ]);
    expect(report.warnings).toEqual([]);
    expect(report.errors).toEqual([]);
  });

  it("drops the spans of a group that exceed the queue, and says how many", async () => {
    const ex = new Recorder(null); // a collector that has not answered yet
    const { p, report } = make(ex, { maxExportBatchSize: 4, maxQueueSize: 6, scheduledDelayMillis: 60_000 });
    const g = group(10);
    p.onEndGroup(g); // 4 in export, 2 waiting: the queue is full, 4 dropped
    expect(ex.batches.map((b) => b.length)).toEqual([4]);
    ex.pending.shift()?.({ code: 0 });
    const late = span(1);
    p.onEnd(late);
    expect(report.warnings).toEqual(["Dropped 4 spans because maxQueueSize reached"]);
    const flushed = p.forceFlush();
    ex.pending.shift()?.({ code: 0 });
    await flushed;
    const ids = (i: number) =>
      decodeTraceRequest(Buffer.from(ex.batches[i].bytes)).resourceSpans[0].scopeSpans[0].spans.map(
        (s: Decoded) => s.spanId,
      );
    expect(ex.batches.map((b) => b.length)).toEqual([4, 3]);
    expect(ids(0)).toEqual(g.ids.slice(0, 4));
    expect(ids(1)).toEqual([...g.ids.slice(4, 6), late.spanContext().spanId]);
    expect(report.errors).toEqual([]);
    await p.shutdown();
    p.onEndGroup(group(2)); // after shutdown: taken no more
    await p.forceFlush();
    expect(ex.batches).toHaveLength(2);
  });

  it("reads the OTEL_BSP_* variables that hold numbers", () => {
    expect(
      batchSettingsFromEnv({
        OTEL_BSP_MAX_EXPORT_BATCH_SIZE: " 64 ",
        OTEL_BSP_MAX_QUEUE_SIZE: "x",
        OTEL_BSP_SCHEDULE_DELAY: "",
        OTEL_BSP_EXPORT_TIMEOUT: "1500",
      }),
    ).toEqual({ maxExportBatchSize: 64, exportTimeoutMillis: 1500 });
  });
});
