// The node's OpenTelemetry resource, shared by its traces (tracing-sdk.ts) and its metrics
// (metrics-sdk.ts): `service.name` svc, `service.version`, `service.instance.id` = node name, then
// what OTEL_RESOURCE_ATTRIBUTES / OTEL_SERVICE_NAME say (the chart sets the pod's attributes there).

import type { Resource } from "@opentelemetry/resources";
import { VERSION } from "./sys/node-info.ts";

export async function nodeResource(nodeName: string): Promise<Resource> {
  const res = await import("@opentelemetry/resources");
  return res
    .defaultResource()
    .merge(
      res.resourceFromAttributes({
        "service.name": "svc",
        "service.version": VERSION,
        "service.instance.id": nodeName,
      }),
    )
    .merge(res.detectResources({ detectors: [res.envDetector] }));
}
