// The deliver spans of one traced message, kept as plain data while its routing runs: children of
// one parent, of zero duration, with one name, kind and set of shared attributes, which differ only
// in span id, time and own attributes (the subscriber's). Each delivery adds an id, a time and an
// own-attributes object to the group's arrays, not a span object; when the routing is over the group
// goes to the span processors in one call (SpanRecorder.recordGroup). The http/protobuf processor
// writes the whole group from its arrays (otlp-append.ts); any other processor takes its spans
// one by one (span(i): the RecordedSpan recordChild would have made).

import type { Attributes, HrTime, SpanContext } from "@opentelemetry/api";
import { childContext, hrNow, newSpanId, RecordedSpan } from "./facade-span.ts";

export class SpanGroup {
  /** The spans' ids (16 hex digits), in the order they were added. */
  readonly ids: string[] = [];
  /** Each span's time (start and end). */
  readonly times: HrTime[] = [];
  /** Each span's own attributes (after the shared ones, keys distinct from theirs). */
  readonly owns: Attributes[] = [];

  constructor(
    readonly name: string,
    readonly kind: number,
    /** The sampled parent of every span of the group. */
    readonly parent: SpanContext,
    /** Attribute objects all the spans share, never modified. */
    readonly shared: readonly Attributes[],
    readonly resource: unknown,
    readonly instrumentationScope: { name: string; version?: string },
  ) {}

  get length(): number {
    return this.ids.length;
  }

  /** Adds a span of the group, now, with `own` attributes; answers its span id. */
  add(own: Attributes): string {
    const id = newSpanId();
    this.ids.push(id);
    this.times.push(hrNow());
    this.owns.push(own);
    return id;
  }

  /** The span context of the span whose id is `spanId` (the parent's trace and trace state). */
  contextOf(spanId: string): SpanContext {
    return childContext(this.parent, spanId);
  }

  /** The i-th span as a finished span object. */
  span(i: number): RecordedSpan {
    return new RecordedSpan(
      this.name,
      this.kind,
      this.contextOf(this.ids[i]),
      this.parent,
      this.times[i],
      this.shared,
      this.owns[i],
      this.resource,
      this.instrumentationScope,
    );
  }
}

/** A span processor that takes a group in one call (the http/protobuf one: otlp-batch-processor.ts). */
export interface SpanGroupProcessor {
  onEndGroup(group: SpanGroup): void;
}

/** Whether `p` takes groups in one call; any other processor takes a group's spans one by one. */
export function takesGroups(p: object): p is SpanGroupProcessor {
  return typeof (p as Partial<SpanGroupProcessor>).onEndGroup === "function";
}
