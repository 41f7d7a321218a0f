// The input of the OTLP encoder (otlp-proto.ts): finished spans in the SDK's ReadableSpan shape,
// as structural types (no OpenTelemetry import), and the grouping of a batch into the request's
// ResourceSpans / ScopeSpans as the SDK's transformer does it.

/** A span context as the SDK gives it (ids in lowercase hex). */
export interface OtlpSpanContext {
  readonly traceId: string;
  readonly spanId: string;
  readonly traceFlags: number;
  readonly isRemote?: boolean;
  readonly traceState?: { serialize(): string };
}

/** Attributes: string, number, boolean, Uint8Array, arrays of those; other values encode as empty. */
export type OtlpAttributes = Readonly<Record<string, unknown>>;

export interface OtlpEvent {
  readonly time: readonly [number, number];
  readonly name: string;
  readonly attributes?: OtlpAttributes;
  readonly droppedAttributesCount?: number;
}

export interface OtlpLink {
  readonly context: OtlpSpanContext;
  readonly attributes?: OtlpAttributes;
  readonly droppedAttributesCount?: number;
}

export interface OtlpResource {
  readonly attributes: OtlpAttributes;
  readonly schemaUrl?: string;
  readonly asyncAttributesPending?: boolean;
}

export interface OtlpScope {
  readonly name: string;
  readonly version?: string;
  readonly schemaUrl?: string;
  readonly attributes?: OtlpAttributes;
  readonly droppedAttributesCount?: number;
}

/** A finished span in the SDK's ReadableSpan shape (the fields the OTLP message carries). */
export interface OtlpSpan {
  readonly name: string;
  readonly kind: number;
  spanContext(): OtlpSpanContext;
  readonly parentSpanContext?: OtlpSpanContext;
  readonly startTime: readonly [number, number];
  readonly endTime: readonly [number, number];
  readonly status: { readonly code: number; readonly message?: string };
  readonly attributes: OtlpAttributes;
  /**
   * The attributes in parts, when the span keeps them so (the facade's spans): objects many spans
   * share (a node's constant attributes, a message's), then the span's own, with distinct keys;
   * `attributes` is them all merged in this order. The encoder encodes each shared object once for
   * the spans that share it.
   */
  readonly attributeParts?: readonly [readonly OtlpAttributes[], OtlpAttributes];
  readonly events: readonly OtlpEvent[];
  readonly links: readonly OtlpLink[];
  readonly droppedAttributesCount: number;
  readonly droppedEventsCount: number;
  readonly droppedLinksCount: number;
  readonly resource: OtlpResource;
  readonly instrumentationScope: OtlpScope;
}

/** An encoded message part: what precedes the spans (`head`) and what follows them (`tail`). */
export interface Encoded {
  head: Uint8Array;
  tail: Uint8Array;
}

export interface ScopeGroup {
  encoded: Encoded;
  spans: OtlpSpan[];
}

export interface ResourceGroup {
  encoded: Encoded;
  scopes: ScopeGroup[];
  byObject: Map<object, ScopeGroup>;
  byKey: Map<string, ScopeGroup>;
}

/**
 * Spans by resource (identity), then by scope (name@version:schemaUrl), in order of appearance,
 * with each resource's and scope's encoding (made by the callbacks, once per group).
 */
export function groupSpans(
  spans: readonly OtlpSpan[],
  encodedResource: (r: OtlpResource) => Encoded,
  encodedScope: (s: OtlpScope) => Encoded,
): ResourceGroup[] {
  const resources = new Map<object, ResourceGroup>();
  let lastScope: object | undefined;
  let lastResource: object | undefined;
  let last: ScopeGroup | undefined;
  for (const span of spans) {
    const resource = span.resource;
    const scope = span.instrumentationScope;
    if (last !== undefined && scope === lastScope && resource === lastResource) {
      last.spans.push(span);
      continue;
    }
    let rg = resources.get(resource);
    if (rg === undefined) {
      rg = { encoded: encodedResource(resource), scopes: [], byObject: new Map(), byKey: new Map() };
      resources.set(resource, rg);
    }
    let sg = rg.byObject.get(scope);
    if (sg === undefined) {
      const key = `${scope.name}@${scope.version || ""}:${scope.schemaUrl || ""}`;
      sg = rg.byKey.get(key);
      if (sg === undefined) {
        sg = { encoded: encodedScope(scope), spans: [] };
        rg.byKey.set(key, sg);
        rg.scopes.push(sg);
      }
      rg.byObject.set(scope, sg);
    }
    sg.spans.push(span);
    last = sg;
    lastScope = scope;
    lastResource = resource;
  }
  return [...resources.values()];
}
