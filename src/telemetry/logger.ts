// Structured logging (pino). Every module takes a Logger from its caller; the level is set from
// `log.level` at start and can be changed at run time (setLevel), which the CLI's
// `log primary-level` will call through the service layer.

import pino from "pino";
import { logFields } from "./tracing.ts";

export type LogLevel = "debug" | "info" | "notice" | "warning" | "error" | "critical";

export interface Logger {
  debug(obj: object | string, msg?: string): void;
  info(obj: object | string, msg?: string): void;
  warn(obj: object | string, msg?: string): void;
  error(obj: object | string, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

/** The family's level names mapped to pino's. */
const PINO_LEVEL: Record<LogLevel, string> = {
  debug: "debug",
  info: "info",
  notice: "info",
  warning: "warn",
  error: "error",
  critical: "fatal",
};

export interface RootLogger extends Logger {
  setLevel(level: LogLevel): void;
  getLevel(): LogLevel;
}

export function createLogger(opts: { level: LogLevel; node: string; destination?: string | number }): RootLogger {
  let current = opts.level;
  const p = pino(
    {
      level: PINO_LEVEL[opts.level],
      base: { node: opts.node },
      timestamp: pino.stdTimeFunctions.isoTime,
      // trace_id/span_id inside a span (tracing on); nothing otherwise.
      mixin: logFields,
    },
    pino.destination({ dest: opts.destination ?? 1, sync: true }),
  );
  const root = p as unknown as RootLogger;
  root.setLevel = (level: LogLevel) => {
    current = level;
    p.level = PINO_LEVEL[level];
  };
  root.getLevel = () => current;
  return root;
}

/** A logger that drops everything (unit tests). */
export function silentLogger(): Logger {
  const l: Logger = {
    debug: () => {},
    info: () => {},
    warn: () => {},
    error: () => {},
    child: () => l,
  };
  return l;
}
