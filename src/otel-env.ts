// The OTEL_* variables both SDK modules (tracing-sdk.ts, metrics-sdk.ts) read themselves, read one
// way: the OTLP protocol of a signal, and numeric settings.

/** OTEL_EXPORTER_OTLP_<SIGNAL>_PROTOCOL, else OTEL_EXPORTER_OTLP_PROTOCOL, trimmed ("" when neither is set). */
export function otlpProtocol(signal: "TRACES" | "METRICS", env: NodeJS.ProcessEnv = process.env): string {
  return (env[`OTEL_EXPORTER_OTLP_${signal}_PROTOCOL`] ?? env.OTEL_EXPORTER_OTLP_PROTOCOL ?? "").trim();
}

/** A number set in the environment; undefined when unset, empty or not a number. */
export function envNumber(name: string, env: NodeJS.ProcessEnv = process.env): number | undefined {
  const raw = env[name]?.trim();
  const n = raw === undefined || raw === "" ? Number.NaN : Number(raw);
  return Number.isNaN(n) ? undefined : n;
}
