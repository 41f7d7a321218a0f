// The node's OTLP span exporter for http/protobuf: the SDK's own exporter
// (@opentelemetry/exporter-trace-otlp-proto, built here the same way from otlp-exporter-base:
// same HTTP transport, OTEL_EXPORTER_OTLP(_TRACES)_* variables, retries, compression, headers and
// self-observability metrics), with our request encoder (otlp-proto.ts) in place of the SDK's
// ProtobufTraceSerializer. Responses, which are rare and small, are still read by the SDK's code.
// Imports no @opentelemetry/sdk-* package at runtime (only types).

import type { OTLPExporterNodeConfigBase } from "@opentelemetry/otlp-exporter-base";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from "@opentelemetry/otlp-transformer";
import type { ReadableSpan, SpanExporter } from "@opentelemetry/sdk-trace-base";
import { encodeTraceExportRequest } from "./otlp-proto.ts";

/** The `otel.component.type` of the SDK's http/protobuf span exporter (for its own metrics). */
const COMPONENT_TYPE = "otlp_http_span_exporter";

/** Requests by encodeTraceExportRequest, responses by the SDK's deserializer. */
export const traceSerializer: ISerializer<ReadableSpan[], IExportTraceServiceResponse> = {
  serializeRequest: (spans) => encodeTraceExportRequest(spans),
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/** OTLP http/protobuf span exporter, configured as the SDK's (options, then environment). */
export class OtlpProtoTraceExporter extends OTLPExporterBase<ReadableSpan[]> implements SpanExporter {
  constructor(config: OTLPExporterNodeConfigBase = {}) {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions(config, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
        traceSerializer,
        COMPONENT_TYPE,
        TraceExporterMetricsHelper,
        config.selfObsMeterProvider,
      ),
    );
  }
}
