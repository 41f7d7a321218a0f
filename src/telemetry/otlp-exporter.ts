// The node's OTLP span exporter for http/protobuf: the SDK's own exporter
// (@opentelemetry/exporter-trace-otlp-proto, built here the same way from otlp-exporter-base:
// same HTTP transport, OTEL_EXPORTER_OTLP(_TRACES)_* variables, retries, compression, headers and
// self-observability metrics), sending requests our encoder made as the spans ended
// (otlp-batch.ts, by otlp-batch-processor.ts) instead of serializing span objects. Responses,
// which are rare and small, are still read by the SDK's code.
// Imports no @opentelemetry/sdk-* package.

import type { OTLPExporterNodeConfigBase } from "@opentelemetry/otlp-exporter-base";
import { OTLPExporterBase } from "@opentelemetry/otlp-exporter-base";
import { convertLegacyHttpOptions, createOtlpHttpExportDelegate } from "@opentelemetry/otlp-exporter-base/node-http";
import {
  type IExportTraceServiceResponse,
  type ISerializer,
  ProtobufTraceSerializer,
  TraceExporterMetricsHelper,
} from "@opentelemetry/otlp-transformer";
import type { EncodedSpans } from "./otlp-batch.ts";
import type { EncodedSpanExporter } from "./otlp-batch-processor.ts";

/** The `otel.component.type` of the SDK's http/protobuf span exporter (for its own metrics). */
const COMPONENT_TYPE = "otlp_http_span_exporter";

/** Requests already encoded; responses by the SDK's deserializer. */
const encodedSerializer: ISerializer<EncodedSpans, IExportTraceServiceResponse> = {
  serializeRequest: (batch) => batch.bytes,
  deserializeResponse: (data) => ProtobufTraceSerializer.deserializeResponse(data),
};

/** OTLP http/protobuf exporter of encoded span batches, configured as the SDK's (options, then environment). */
export class OtlpProtoTraceExporter extends OTLPExporterBase<EncodedSpans> implements EncodedSpanExporter {
  constructor(config: OTLPExporterNodeConfigBase = {}) {
    super(
      createOtlpHttpExportDelegate(
        convertLegacyHttpOptions(config, "TRACES", "v1/traces", { "Content-Type": "application/x-protobuf" }),
        encodedSerializer,
        COMPONENT_TYPE,
        { name: TraceExporterMetricsHelper.name, countItems: (batch: EncodedSpans) => batch.length },
        config.selfObsMeterProvider,
      ),
    );
  }
}
