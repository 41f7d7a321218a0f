// The OpenTelemetry SDK of a node (part of the composition root, with main.ts: the only modules
// that import the SDK). Loaded by main.ts only when `telemetry.tracing = on`.

import type { ReadableSpan, Sampler, SpanProcessor } from "@opentelemetry/sdk-trace-base";
import { envNumber, otlpProtocol } from "./otel-env.ts";
import { nodeResource } from "./otel-resource.ts";
import { VERSION } from "./sys/node-info.ts";
import type { BatchSettings } from "./telemetry/otlp-batch-processor.ts";
import { takesGroups } from "./telemetry/span-group.ts";
import { loadTracingApi, PRESAMPLED, type SamplingHint, type SpanRecorder, Tracing } from "./telemetry/tracing.ts";

/** Tracing options of a start (tests pass an in-memory exporter and a sampler). */
export interface TracingSdkOptions {
  spanProcessors?: SpanProcessor[];
  sampler?: Sampler;
  sampling?: SamplingHint;
}

/** The node's per-message tracing settings (`telemetry.max_deliver_spans`, `telemetry.sampling_run`). */
export interface MessageTracingSettings {
  maxDeliverSpans: number;
  samplingRun: number;
}

/** The node's OpenTelemetry SDK: its tracing facade and how to flush and stop it. */
export interface TracingSdk {
  tracing: Tracing;
  shutdown(): Promise<void>;
}

/**
 * Loads the OpenTelemetry API and SDK (only here, only when tracing is on): a tracer provider with
 * the node's resource (`service.name` svc, `service.instance.id` = node name, then
 * OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME), the sampler of OTEL_TRACES_SAMPLER(_ARG), and a
 * batching OTLP exporter for OTEL_EXPORTER_OTLP(_TRACES)_PROTOCOL: http/protobuf (default; spans
 * encoded by our encoder as they end, batched as the SDK's BatchSpanProcessor batches, sent by the
 * SDK's exporter transport, see telemetry/otlp-batch-processor.ts), http/json or grpc (the SDK's
 * BatchSpanProcessor and exporters), each reading its endpoint and headers from the
 * OTEL_EXPORTER_OTLP_* variables.
 */
export async function startTracingSdk(
  nodeName: string,
  settings: MessageTracingSettings,
  opts: TracingSdkOptions = {},
): Promise<TracingSdk> {
  const api = await loadTracingApi();
  const [base, node, resource] = await Promise.all([
    import("@opentelemetry/sdk-trace-base"),
    import("@opentelemetry/sdk-trace-node"),
    nodeResource(nodeName),
  ]);
  let spanProcessors = opts.spanProcessors;
  if (spanProcessors === undefined) {
    const protocol = otlpProtocol("TRACES");
    if (protocol === "grpc" || protocol === "http/json") {
      const exporter =
        protocol === "grpc"
          ? new (await import("@opentelemetry/exporter-trace-otlp-grpc")).OTLPTraceExporter()
          : new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter();
      spanProcessors = [new base.BatchSpanProcessor(exporter)];
    } else {
      // http/protobuf: spans encoded as they end (the SDK's batching, OTEL_BSP_* included).
      const [{ EncodingSpanProcessor }, { OtlpProtoTraceExporter }] = await Promise.all([
        import("./telemetry/otlp-batch-processor.ts"),
        import("./telemetry/otlp-exporter.ts"),
      ]);
      const report = {
        warn: (message: string) => api.diag.warn(message),
        error: (err: Error) => api.diag.error("span export failed", err),
      };
      spanProcessors = [new EncodingSpanProcessor(new OtlpProtoTraceExporter(), batchSettingsFromEnv(), report)];
    }
  }
  const configured =
    opts.sampler === undefined
      ? envSampler(base, process.env.OTEL_TRACES_SAMPLER, process.env.OTEL_TRACES_SAMPLER_ARG)
      : { sampler: opts.sampler, hint: opts.sampling ?? null };
  // Root spans the facade sampled itself (PRESAMPLED in their context) are recorded without a
  // second draw; every other decision is the configured sampler's.
  const sampled = { decision: base.SamplingDecision.RECORD_AND_SAMPLED };
  const inner = configured?.sampler;
  const sampler: Sampler | undefined =
    inner === undefined
      ? undefined
      : {
          shouldSample: (ctx, ...rest) =>
            ctx.getValue(PRESAMPLED) === true ? sampled : inner.shouldSample(ctx, ...rest),
          toString: () => inner.toString(),
        };
  const provider = new node.NodeTracerProvider({
    resource,
    spanProcessors,
    ...(sampler === undefined ? {} : { sampler }),
  });
  // The async-local-storage context manager (the first node of a process registers it; our own
  // propagation code reads traceparent, so no global propagator is needed).
  provider.register({ propagator: null });
  // Per-subscriber spans (deliver, ack) skip the SDK's Span class and go to the same processors.
  const processors = spanProcessors;
  const recorder: SpanRecorder = {
    resource,
    scope: { name: "svc", version: VERSION },
    record: (span) => {
      for (const p of processors) p.onEnd(span as unknown as ReadableSpan);
    },
    recordGroup: (group) => {
      for (const p of processors) {
        if (takesGroups(p)) p.onEndGroup(group);
        else for (let i = 0; i < group.length; i++) p.onEnd(group.span(i) as unknown as ReadableSpan);
      }
    },
  };
  const tracing = new Tracing(
    api,
    provider.getTracer("svc", VERSION),
    settings.maxDeliverSpans,
    // The sampler's hint, sampling roots in runs of the node's setting.
    configured?.hint == null ? null : { ...configured.hint, run: settings.samplingRun },
    recorder,
  );
  return { tracing, shutdown: () => provider.shutdown() };
}

/** The OTEL_BSP_* settings that are set to a number (the SDK's BatchSpanProcessor reads the same). */
export function batchSettingsFromEnv(env: NodeJS.ProcessEnv = process.env): Partial<BatchSettings> {
  const out: Partial<BatchSettings> = {};
  const read = (key: keyof BatchSettings, name: string) => {
    const n = envNumber(name, env);
    if (n !== undefined) out[key] = n;
  };
  read("maxExportBatchSize", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE");
  read("maxQueueSize", "OTEL_BSP_MAX_QUEUE_SIZE");
  read("scheduledDelayMillis", "OTEL_BSP_SCHEDULE_DELAY");
  read("exportTimeoutMillis", "OTEL_BSP_EXPORT_TIMEOUT");
  return out;
}

/**
 * The sampler of OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG (unset: parentbased_always_on) and
 * what the facade may decide from it; undefined for a value this does not know (the SDK then reads
 * the variables itself, and every decision is its sampler's).
 */
export function envSampler(
  base: typeof import("@opentelemetry/sdk-trace-base"),
  name: string | undefined,
  arg: string | undefined,
): { sampler: Sampler; hint: SamplingHint } | undefined {
  // The SDK's rule: a missing, unparsable or out-of-range ratio is 1.
  const n = arg === undefined || arg.trim() === "" ? Number.NaN : Number(arg);
  const ratio = Number.isFinite(n) && n >= 0 && n <= 1 ? n : 1;
  const parentBased = (root: Sampler) => new base.ParentBasedSampler({ root });
  switch ((name ?? "parentbased_always_on").trim().toLowerCase()) {
    case "always_on":
      return { sampler: new base.AlwaysOnSampler(), hint: { root: 1, parentBased: false } };
    case "always_off":
      return { sampler: new base.AlwaysOffSampler(), hint: { root: 0, parentBased: false } };
    case "traceidratio":
      return { sampler: new base.TraceIdRatioBasedSampler(ratio), hint: { root: ratio, parentBased: false } };
    case "parentbased_always_on":
      return { sampler: parentBased(new base.AlwaysOnSampler()), hint: { root: 1, parentBased: true } };
    case "parentbased_always_off":
      return { sampler: parentBased(new base.AlwaysOffSampler()), hint: { root: 0, parentBased: true } };
    case "parentbased_traceidratio":
      return {
        sampler: parentBased(new base.TraceIdRatioBasedSampler(ratio)),
        hint: { root: ratio, parentBased: true },
      };
    default:
      return undefined;
  }
}
