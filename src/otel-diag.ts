// The OpenTelemetry SDK's own diagnostics (a failed export, a dropped span, a full queue) in the
// node's log, at warning level and above: without a logger of its own the SDK says nothing, and an
// operator whose collector is unreachable would see no trace or metric arrive and no reason.
// Installed by main.ts when tracing or the metrics export is on.

import type { Logger } from "./telemetry/logger.ts";

const text = (message: string, args: unknown[]): string =>
  [message, ...args.map((a) => (a instanceof Error ? a.message : typeof a === "string" ? a : JSON.stringify(a)))].join(
    " ",
  );

export async function logOtelDiagnostics(logger: Logger): Promise<void> {
  const api = await import("@opentelemetry/api");
  const log = logger.child({ component: "opentelemetry" });
  api.diag.setLogger(
    {
      error: (message, ...args) => log.error({}, text(message, args)),
      warn: (message, ...args) => log.warn({}, text(message, args)),
      info: () => {},
      debug: () => {},
      verbose: () => {},
    },
    { logLevel: api.DiagLogLevel.WARN, suppressOverrideMessage: true },
  );
}
