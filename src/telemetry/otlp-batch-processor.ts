// The span processor of the http/protobuf export (tracing-sdk.ts): the SDK's BatchSpanProcessor
// behaviour (sampled spans only, a bounded queue that drops when full, a batch exported as soon as
// it is full or `scheduledDelayMillis` after its first span, one export at a time, each bounded by
// `exportTimeoutMillis`; the OTEL_BSP_* settings), except that spans are encoded (otlp-batch.ts)
// ENCODE_RUN at a time as they end instead of all at once when their batch is exported. A batch in
// waiting therefore costs bytes and at most a run of span objects, not objects that survive garbage
// collections; and the encoder runs over a run of spans at a time, not once per span: at low
// sampling ratios the spans of a message come far apart, and a lone span's encoding was several
// times as costly (code and data gone cold in between). Imports no OpenTelemetry package: the spans
// and the exporter are structural types.

import { type EncodedSpans, SpanBatch } from "./otlp-batch.ts";
import type { OtlpSpan } from "./otlp-span.ts";
import type { SpanGroup } from "./span-group.ts";

/** What the exporter answers (the SDK's ExportResult: code 0 success, 1 failure). */
export interface ExportOutcome {
  code: number;
  error?: Error;
}

/**
 * An exporter of encoded requests (otlp-exporter.ts). A request's bytes are the exporter's until it
 * answers success: the processor then writes a later request into them.
 */
export interface EncodedSpanExporter {
  export(batch: EncodedSpans, done: (outcome: ExportOutcome) => void): void;
  shutdown(): Promise<void>;
}

/** The BatchSpanProcessor settings (OTEL_BSP_*), with its defaults. */
export interface BatchSettings {
  maxQueueSize: number;
  maxExportBatchSize: number;
  scheduledDelayMillis: number;
  exportTimeoutMillis: number;
}

export const BATCH_DEFAULTS: Readonly<BatchSettings> = Object.freeze({
  maxQueueSize: 2048,
  maxExportBatchSize: 512,
  scheduledDelayMillis: 5000,
  exportTimeoutMillis: 30000,
});

/**
 * Finished spans held before they are encoded together: few enough that holding them costs little,
 * enough that the encoding of a run is warm.
 */
export const ENCODE_RUN = 64;

/** Where the processor reports what the SDK's processor logs (dropped spans, failed exports). */
export interface BatchReport {
  warn(message: string): void;
  error(err: Error): void;
}

export class EncodingSpanProcessor {
  private readonly settings: BatchSettings;
  private batch = new SpanBatch();
  /** Finished spans not encoded yet (at most ENCODE_RUN), oldest first; part of the batch being filled. */
  private pending: OtlpSpan[] = [];
  /** Full batches waiting for export, oldest first. */
  private readonly ready: EncodedSpans[] = [];
  /** Spans in `ready`, `batch` and `pending`, against maxQueueSize. */
  private queued = 0;
  private exporting = false;
  private timer: NodeJS.Timeout | undefined;
  private dropped = 0;
  private closed = false;
  private shutdownDone: Promise<void> | undefined;
  /** forceFlush() callers waiting for the queue to empty. */
  private idle: (() => void)[] = [];

  constructor(
    private readonly exporter: EncodedSpanExporter,
    settings: Partial<BatchSettings>,
    private readonly report: BatchReport,
  ) {
    const s = { ...BATCH_DEFAULTS, ...settings };
    if (s.maxExportBatchSize > s.maxQueueSize) {
      report.warn(
        "BatchSpanProcessor: maxExportBatchSize must be smaller or equal to maxQueueSize, setting maxExportBatchSize to match maxQueueSize",
      );
      s.maxExportBatchSize = s.maxQueueSize;
    }
    this.settings = s;
  }

  onStart(): void {}

  onEnd(span: OtlpSpan): void {
    if (this.closed || (span.spanContext().traceFlags & 1) === 0) return;
    if (this.queued >= this.settings.maxQueueSize) {
      this.dropped++;
      return;
    }
    this.reportDropped();
    this.pending.push(span);
    this.queued++;
    if (this.filling >= this.settings.maxExportBatchSize) this.seal();
    else if (this.pending.length >= ENCODE_RUN) this.encodePending();
    this.pump();
  }

  /**
   * The spans of a group (a traced message's deliveries, span-group.ts), which come as a run: the
   * pending spans are encoded, then the group's spans straight into the batch from its arrays, as
   * many at a time as the batch has room for.
   */
  onEndGroup(group: SpanGroup): void {
    if (this.closed) return;
    const s = this.settings;
    for (let from = 0; from < group.length; ) {
      if (this.queued >= s.maxQueueSize) {
        this.dropped += group.length - from;
        break;
      }
      this.reportDropped();
      this.encodePending();
      const n = Math.min(group.length - from, s.maxQueueSize - this.queued, s.maxExportBatchSize - this.batch.length);
      try {
        this.batch.addGroup(group, from, from + n);
        this.queued += n;
      } catch (err) {
        this.report.error(err as Error);
      }
      from += n;
      if (this.filling >= s.maxExportBatchSize) this.seal();
    }
    this.pump();
  }

  /** Says how many spans were dropped since it last said so (as the SDK's processor, once there is room again). */
  private reportDropped(): void {
    if (this.dropped === 0) return;
    this.report.warn(`Dropped ${this.dropped} spans because maxQueueSize reached`);
    this.dropped = 0;
  }

  /** Spans in the batch being filled, encoded or pending. */
  private get filling(): number {
    return this.batch.length + this.pending.length;
  }

  /** Encodes the pending spans into the batch; a span the encoder cannot write is reported and left out. */
  private encodePending(): void {
    const spans = this.pending;
    if (spans.length === 0) return;
    this.pending = [];
    for (const span of spans) {
      try {
        this.batch.add(span);
      } catch (err) {
        this.queued--;
        this.report.error(err as Error);
      }
    }
  }

  /** Exports everything queued; resolves when the queue is empty. */
  forceFlush(): Promise<void> {
    if (this.filling > 0) this.seal();
    this.pump();
    if (!this.exporting) return Promise.resolve();
    return new Promise((resolve) => this.idle.push(resolve));
  }

  shutdown(): Promise<void> {
    this.shutdownDone ??= (async () => {
      this.closed = true;
      await this.forceFlush();
      clearTimeout(this.timer);
      await this.exporter.shutdown();
    })();
    return this.shutdownDone;
  }

  /** The batch being filled (its pending spans encoded) goes to the export queue. */
  private seal(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.encodePending();
    if (this.batch.length === 0) return; // every pending span failed to encode
    try {
      this.ready.push(this.batch.take());
    } catch (err) {
      this.queued -= this.batch.length;
      this.batch.clear();
      this.report.error(err as Error);
    }
  }

  /** Starts the next export, or the timer of a batch that is not full yet. */
  private pump(): void {
    if (this.exporting) return;
    const next = this.ready.shift();
    if (next === undefined) {
      if (this.filling > 0 && this.timer === undefined) {
        this.timer = setTimeout(() => {
          this.timer = undefined;
          if (this.filling > 0) this.seal();
          this.pump();
        }, this.settings.scheduledDelayMillis);
        this.timer.unref();
      }
      this.wakeIdle();
      return;
    }
    this.exporting = true;
    let settled = false;
    let recycled = false;
    const finish = (err: Error | undefined, answered: boolean): void => {
      // The bytes of an export the exporter answered as a success (even late) are free again.
      if (answered && err === undefined && !recycled) {
        recycled = true;
        this.batch.recycle(next);
      }
      if (settled) return;
      settled = true;
      clearTimeout(deadline);
      this.queued -= next.length;
      this.exporting = false;
      if (err !== undefined) this.report.error(err);
      this.pump();
    };
    const deadline = setTimeout(() => finish(new Error("Timeout"), false), this.settings.exportTimeoutMillis);
    deadline.unref();
    try {
      this.exporter.export(next, (r) =>
        finish(r.code === 0 ? undefined : (r.error ?? new Error("BatchSpanProcessor: span export failed")), true),
      );
    } catch (err) {
      finish(err as Error, false);
    }
  }

  private wakeIdle(): void {
    if (this.ready.length > 0 || this.exporting) return;
    const waiting = this.idle;
    if (waiting.length === 0) return;
    this.idle = [];
    for (const resolve of waiting) resolve();
  }
}
