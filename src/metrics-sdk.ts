// OTLP export of the node's metrics (part of the composition root, with main.ts and tracing-sdk.ts:
// the only modules that import the OpenTelemetry SDK). Loaded by main.ts only when
// `telemetry.metrics = on`. Every figure of the Prometheus exposition (services/prometheus.ts) is
// an instrument read once per export: the metrics as monotonic counters, the statistics, listener
// figures and alarm count as gauges, each point with the `node` attribute, under the node's
// resource (otel-resource.ts). Names are `svc.` + the API's key (`svc.messages.received`,
// `svc.connections.count`), then `svc.listener.current_conns|max_conns|acceptors` and the counter
// `svc.listener.shutdown` (attributes `listener`, `listen_on`, `reason`), and `svc.alarms.active`.
// The exporter is the SDK's OTLP one for OTEL_EXPORTER_OTLP(_METRICS)_PROTOCOL (http/protobuf by
// default, http/json, grpc), which reads its endpoint, headers, compression and temporality from
// the OTEL_EXPORTER_OTLP_* variables; OTEL_METRIC_EXPORT_INTERVAL (60000 ms) and
// OTEL_METRIC_EXPORT_TIMEOUT (30000 ms) time it.

import type { Attributes, BatchObservableResult, Observable } from "@opentelemetry/api";
import type { PushMetricExporter } from "@opentelemetry/sdk-metrics";
import { envNumber, otlpProtocol } from "./otel-env.ts";
import { nodeResource } from "./otel-resource.ts";
import {
  ALARMS_ACTIVE,
  LISTENER_GAUGES,
  LISTENER_SHUTDOWNS,
  metricHelp,
  type PrometheusInput,
  shutdownCounts,
  statHelp,
} from "./services/prometheus.ts";
import { VERSION } from "./sys/node-info.ts";

export interface MetricsSdk {
  /** Exports once more (what the instruments read now), then stops. */
  shutdown(): Promise<void>;
}

/** Longest wait for the last export at shutdown. */
const SHUTDOWN_WAIT_MS = 2000;

/** A positive integer of the environment, else `fallback`. */
function envMillis(name: string, fallback: number, env: NodeJS.ProcessEnv): number {
  const n = envNumber(name, env);
  return n !== undefined && Number.isInteger(n) && n > 0 ? n : fallback;
}

/** An instrument name from an API key (OpenTelemetry allows letters, digits, `_ . - /`). */
function instrumentName(key: string): string {
  return `svc.${key.replace(/[^a-zA-Z0-9_./-]/g, "_")}`;
}

async function otlpExporter(env: NodeJS.ProcessEnv): Promise<PushMetricExporter> {
  const protocol = otlpProtocol("METRICS", env);
  if (protocol === "grpc") return new (await import("@opentelemetry/exporter-metrics-otlp-grpc")).OTLPMetricExporter();
  if (protocol === "http/json")
    return new (await import("@opentelemetry/exporter-metrics-otlp-http")).OTLPMetricExporter();
  return new (await import("@opentelemetry/exporter-metrics-otlp-proto")).OTLPMetricExporter();
}

export async function startMetricsSdk(
  nodeName: string,
  read: () => PrometheusInput,
  env: NodeJS.ProcessEnv = process.env,
): Promise<MetricsSdk> {
  const [api, sdk, resource, exporter] = await Promise.all([
    import("@opentelemetry/api"),
    import("@opentelemetry/sdk-metrics"),
    nodeResource(nodeName),
    otlpExporter(env),
  ]);
  const interval = envMillis("OTEL_METRIC_EXPORT_INTERVAL", 60_000, env);
  const reader = new sdk.PeriodicExportingMetricReader({
    exporter,
    exportIntervalMillis: interval,
    exportTimeoutMillis: Math.min(interval, envMillis("OTEL_METRIC_EXPORT_TIMEOUT", 30_000, env)),
  });
  const provider = new sdk.MeterProvider({ resource, readers: [reader] });
  const meter = provider.getMeter("svc", VERSION);
  const int = { valueType: api.ValueType.INT };

  const counters = new Map<string, Observable>();
  const gauges = new Map<string, Observable>();
  const instrument = (kind: "counter" | "gauge", key: string, description: string): Observable => {
    const made = kind === "counter" ? counters : gauges;
    let i = made.get(key);
    if (i === undefined) {
      const options = { ...int, description };
      i =
        kind === "counter"
          ? meter.createObservableCounter(instrumentName(key), options)
          : meter.createObservableGauge(instrumentName(key), options);
      made.set(key, i);
    }
    return i;
  };
  const counter = (key: string, description: string) => instrument("counter", key, description);
  const gauge = (key: string, description: string) => instrument("gauge", key, description);
  const listenerGauges = LISTENER_GAUGES.map((g) => [gauge(g.key, g.help), g.value] as const);
  const shutdowns = counter(LISTENER_SHUTDOWNS.key, LISTENER_SHUTDOWNS.help);
  const alarms = gauge(ALARMS_ACTIVE.key, ALARMS_ACTIVE.help);

  /**
   * One batch callback per set of keys, reading the node once per export; keys that appear later
   * (a plugin's metrics) get a callback of their own, which reports from the next export.
   */
  const observe = (metricKeys: string[], statKeys: string[], withFixed: boolean): void => {
    const metricInstruments = metricKeys.map((k) => counter(k, metricHelp(k)));
    const statInstruments = statKeys.map((k) => gauge(k, statHelp(k)));
    const fixed = withFixed ? [...listenerGauges.map(([g]) => g), shutdowns, alarms] : [];
    meter.addBatchObservableCallback(
      (result: BatchObservableResult) => {
        const f = read();
        const node: Attributes = { node: f.node };
        for (let i = 0; i < metricKeys.length; i++)
          result.observe(metricInstruments[i], f.metrics[metricKeys[i]] ?? 0, node);
        for (let i = 0; i < statKeys.length; i++) result.observe(statInstruments[i], f.stats[statKeys[i]] ?? 0, node);
        if (withFixed) {
          for (const l of f.listeners) {
            const attrs: Attributes = { node: f.node, listener: l.protocol, listen_on: l.listen_on };
            for (const [g, value] of listenerGauges) result.observe(g, value(l), attrs);
            for (const [reason, n] of Object.entries(shutdownCounts(l)))
              result.observe(shutdowns, n, { ...attrs, reason });
          }
          result.observe(alarms, f.alarmsActive, node);
        }
        const newMetrics = Object.keys(f.metrics).filter((k) => !counters.has(k));
        const newStats = Object.keys(f.stats).filter((k) => !gauges.has(k));
        if (newMetrics.length > 0 || newStats.length > 0) observe(newMetrics, newStats, false);
      },
      [...metricInstruments, ...statInstruments, ...fixed],
    );
  };
  const first = read();
  observe(Object.keys(first.metrics), Object.keys(first.stats), true);
  return {
    // The last export waits for an unreachable collector no longer than a stop can.
    shutdown: () =>
      Promise.race([
        provider.shutdown(),
        new Promise<void>((resolve) => setTimeout(resolve, SHUTDOWN_WAIT_MS).unref()),
      ]),
  };
}
