// The node's log level at run time (the CLI's `log primary-level <level>`): read it, or change it
// without a restart. The level names are `log.level`'s.

import type { LogLevel, RootLogger } from "../telemetry/logger.ts";

const LEVELS: readonly LogLevel[] = ["debug", "info", "notice", "warning", "error", "critical"];

export type LogLevelOutcome = { ok: true; level: LogLevel } | { ok: false; error: "bad_level"; message: string };

export class LogService {
  constructor(private readonly logger: RootLogger) {}

  getLogLevel(): LogLevel {
    return this.logger.getLevel();
  }

  setLogLevel(level: string): LogLevelOutcome {
    if (!(LEVELS as readonly string[]).includes(level))
      return { ok: false, error: "bad_level", message: `level must be one of ${LEVELS.join(", ")}` };
    this.logger.setLevel(level as LogLevel);
    this.logger.info({ log_level: level }, "log level changed");
    return { ok: true, level: level as LogLevel };
  }
}
