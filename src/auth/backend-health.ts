// The health of a provider's back end (HTTP service, database, directory): the first failure
// raises the provider's alarm and logs an error, later failures log at debug while it stays
// raised, and the next answer clears it (logged once).

import type { Logger } from "../telemetry/logger.ts";
import type { AlarmSink } from "./http-provider.ts";

export class BackendHealth {
  constructor(
    private readonly deps: { alarms: () => AlarmSink | undefined; logger: Logger },
    private readonly plugin: string,
    private readonly alarm: string,
    /** What the log lines call the back end ("LDAP directory", "MySQL"...). */
    private readonly label: string,
  ) {}

  /** The back end answered: its alarm clears. */
  up(fields: Record<string, unknown>): void {
    if (this.deps.alarms()?.deactivate(this.alarm))
      this.deps.logger.info({ plugin: this.plugin, ...fields }, `${this.label} answers again`);
  }

  /** The back end failed: the alarm (`desc`, `details`) is raised; `fields` go to the log line. */
  down(desc: string, details: Record<string, unknown>, fields: Record<string, unknown>): void {
    const raised = this.deps.alarms()?.activate(this.alarm, desc, details);
    const log = { plugin: this.plugin, ...fields };
    if (raised !== false) this.deps.logger.error(log, `${this.label} unavailable`);
    else this.deps.logger.debug(log, `${this.label} still unavailable`);
  }

  /** The provider stops: no alarm stays behind. */
  clear(): void {
    this.deps.alarms()?.deactivate(this.alarm);
  }
}
