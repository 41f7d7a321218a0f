// Spans encoded as they end, a run at a time (the batching span processor, otlp-batch-processor.ts):
// each finished span added is written at once as its ScopeSpans.spans field into the bytes of its group
// (resource, then scope), and take() wraps the groups into the ExportTraceServiceRequest. A batch
// waiting for export therefore holds bytes, not span objects. The request is the one
// encodeTraceExportRequest writes for the same spans (grouping and order of first appearance as in
// otlp-span.ts; the tests compare the bytes). The group buffers are reused from batch to batch.

import { appendGroupFields, appendSpanField, SpanFields } from "./otlp-append.ts";
import { encodedResource, encodedScope } from "./otlp-proto.ts";
import type { Encoded, OtlpResource, OtlpScope, OtlpSpan } from "./otlp-span.ts";
import { delimited } from "./otlp-wire.ts";
import { RecentParts } from "./otlp-writer.ts";
import type { SpanGroup } from "./span-group.ts";

/** An encoded export request and the number of spans in it. */
export interface EncodedSpans {
  readonly bytes: Uint8Array;
  readonly length: number;
}

interface ScopeChunk {
  readonly scope: OtlpScope;
  readonly fields: SpanFields;
  /** The batch (epoch) this scope last received a span in. */
  epoch: number;
}

interface ResourceChunk {
  readonly resource: OtlpResource;
  readonly byObject: Map<object, ScopeChunk>;
  readonly byKey: Map<string, ScopeChunk>;
  /** This batch's scopes, in order of first appearance. */
  scopes: ScopeChunk[];
  epoch: number;
}

/** Distinct resources or scopes kept across batches beyond which the groups start over. */
const GROUP_LIMIT = 64;
/** Request buffers kept for reuse (recycle()). */
const SPARE_LIMIT = 4;

export class SpanBatch {
  /** Spans in the batch. */
  length = 0;
  private epoch = 1;
  private readonly resources = new Map<object, ResourceChunk>();
  /** This batch's resources, in order of first appearance. */
  private order: ResourceChunk[] = [];
  /** Shared attribute parts of the last spans, encoded (otlp-writer.ts). */
  private readonly shared = new RecentParts();
  private lastResource: object | undefined;
  private lastScope: object | undefined;
  private last: ScopeChunk | undefined;
  /** Buffers of exported requests, for the next requests (a fresh buffer of this size costs page faults). */
  private readonly spare: Buffer[] = [];

  /** Encodes `span` into the batch (a span the encoder cannot write throws, and the batch is unchanged). */
  add(span: OtlpSpan): void {
    appendSpanField(this.fieldsOf(span.resource, span.instrumentationScope), span, this.shared);
    this.length++;
  }

  /**
   * Encodes the spans `from` to `to` (excluded) of `group` into the batch (when one cannot be
   * written this throws, and the batch is unchanged).
   */
  addGroup(group: SpanGroup, from: number, to: number): void {
    const fields = this.fieldsOf(group.resource as OtlpResource, group.instrumentationScope);
    const len = fields.len;
    try {
      appendGroupFields(fields, group, from, to, this.shared);
    } catch (err) {
      fields.len = len;
      throw err;
    }
    this.length += to - from;
  }

  /** The encoded spans of `resource` and `scope` in this batch, to append to. */
  private fieldsOf(resource: OtlpResource, scope: OtlpScope): SpanFields {
    let chunk = this.last;
    if (chunk === undefined || scope !== this.lastScope || resource !== this.lastResource) {
      chunk = this.chunkOf(resource, scope);
      this.last = chunk;
      this.lastScope = scope;
      this.lastResource = resource;
    }
    return chunk.fields;
  }

  private chunkOf(resource: OtlpResource, scope: OtlpScope): ScopeChunk {
    let rc = this.resources.get(resource);
    if (rc === undefined) {
      rc = { resource, byObject: new Map(), byKey: new Map(), scopes: [], epoch: 0 };
      this.resources.set(resource, rc);
    }
    if (rc.epoch !== this.epoch) {
      rc.epoch = this.epoch;
      rc.scopes = [];
      this.order.push(rc);
    }
    let sc = rc.byObject.get(scope);
    if (sc === undefined) {
      const key = `${scope.name}@${scope.version || ""}:${scope.schemaUrl || ""}`;
      sc = rc.byKey.get(key);
      if (sc === undefined) {
        sc = { scope, fields: new SpanFields(), epoch: 0 };
        rc.byKey.set(key, sc);
      }
      rc.byObject.set(scope, sc);
    }
    if (sc.epoch !== this.epoch) {
      sc.epoch = this.epoch;
      rc.scopes.push(sc);
    }
    return sc;
  }

  /** The request of the spans added since the last take(), and an empty batch. */
  take(): EncodedSpans {
    const length = this.length;
    // (A group whose only span failed to encode stays empty and is left out.)
    const groups = [];
    for (const rc of this.order) {
      const scopes = rc.scopes.filter((sc) => sc.fields.len > 0);
      if (scopes.length === 0) continue;
      groups.push({
        encoded: encodedResource(rc.resource),
        scopes: scopes.map((sc) => ({ encoded: encodedScope(sc.scope), fields: sc.fields })),
      });
    }
    let total = 0;
    const sizes: number[] = [];
    for (const g of groups) {
      let size = partSize(g.encoded);
      for (const s of g.scopes) {
        const scopeSize = partSize(s.encoded) + s.fields.len;
        sizes.push(scopeSize);
        size += delimited(scopeSize);
      }
      sizes.push(size);
      total += delimited(size);
    }
    const bytes = this.output(total);
    let pos = 0;
    const header = (tag: number, len: number): void => {
      bytes[pos++] = tag;
      for (; len > 0x7f; len >>>= 7) bytes[pos++] = (len & 0x7f) | 0x80;
      bytes[pos++] = len;
    };
    const put = (b: Uint8Array): void => {
      bytes.set(b, pos);
      pos += b.length;
    };
    let i = 0;
    for (const g of groups) {
      const own = i + g.scopes.length;
      header(0x0a, sizes[own]); // ExportTraceServiceRequest.resource_spans
      put(g.encoded.head);
      for (const s of g.scopes) {
        header(0x12, sizes[i++]); // ResourceSpans.scope_spans
        put(s.encoded.head);
        put(s.fields.buf.subarray(0, s.fields.len));
        s.fields.len = 0;
        put(s.encoded.tail);
      }
      i++;
      put(g.encoded.tail);
    }
    if (pos !== total) throw new Error(`OTLP encoding: wrote ${pos} of ${total} bytes`);
    this.reset();
    return { bytes, length };
  }

  /**
   * Hands back a request take() made, once its export is over (the exporter holds its bytes no
   * longer): a later take() writes into them.
   */
  recycle(request: EncodedSpans): void {
    const b = request.bytes;
    if (this.spare.length >= SPARE_LIMIT || b.byteOffset !== 0) return;
    this.spare.push(Buffer.from(b.buffer, 0, b.buffer.byteLength));
  }

  /** `total` bytes to write a request into: a spare buffer when one is large enough. */
  private output(total: number): Buffer {
    const spare = this.spare;
    while (spare.length > 0) {
      const b = spare.pop() as Buffer;
      if (b.length >= total) return b.subarray(0, total);
    }
    // Its own memory (not the pool's), with room for a somewhat larger request next time.
    const capacity = Math.ceil((total * 1.25) / 4096) * 4096;
    return Buffer.allocUnsafeSlow(capacity).subarray(0, total);
  }

  /** Drops the spans added since the last take(). */
  clear(): void {
    for (const rc of this.order) for (const sc of rc.scopes) sc.fields.len = 0;
    this.reset();
  }

  private reset(): void {
    this.length = 0;
    this.epoch++;
    this.order = [];
    this.last = this.lastScope = this.lastResource = undefined;
    if (this.resources.size > GROUP_LIMIT) this.resources.clear();
    else {
      for (const rc of this.resources.values()) {
        if (rc.byObject.size > GROUP_LIMIT) this.resources.delete(rc.resource);
      }
    }
  }
}

function partSize(e: Encoded): number {
  return e.head.length + e.tail.length;
}
