// Alarms (spec section 2, "Alarm"): a named condition is raised (activated) and later cleared.
// The node keeps the present alarms and a history of cleared ones (newest last, at most
// HISTORY_LIMIT). Raising publishes JSON to `$SYS/brokers/<node>/alarms/alert`, clearing to
// `.../alarms/clear`, and both are logged. Records carry both the family's spellings: `id` and
// `name`, `desc` and `message`. Any part of the node may raise and clear its own alarms (the OS
// monitor here; later a resource that goes down).

import type { Broker } from "../broker/broker.ts";
import { formatDatetime } from "./format.ts";
import { publishSys, sysTopic } from "./sys-topics.ts";

/** Cleared alarms kept for the history view; older ones are forgotten. */
export const HISTORY_LIMIT = 1000;

export interface AlarmRecord {
  id: string;
  name: string;
  desc: string;
  message: string;
  /** Measured values and thresholds behind the alarm. */
  details: Record<string, unknown>;
  /** `YYYY-MM-DD HH:MM:SS` local time. */
  activate_at: string;
  activated: boolean;
}

export interface AlarmHistoryEntry extends AlarmRecord {
  clear_at: string;
}

interface Active {
  name: string;
  desc: string;
  details: Record<string, unknown>;
  at: number;
}

export class Alarms {
  private readonly active = new Map<string, Active>();
  private readonly cleared: AlarmHistoryEntry[] = [];

  constructor(private readonly broker: Broker) {}

  /** Raises `name`; false (and nothing published) when it is already active. */
  activate(name: string, desc: string, details: Record<string, unknown> = {}, now = Date.now()): boolean {
    if (this.active.has(name)) return false;
    const a: Active = { name, desc, details, at: now };
    this.active.set(name, a);
    this.broker.logger.warn({ alarm: name, desc, details }, "alarm raised");
    this.publish("alert", record(a));
    return true;
  }

  /** Clears `name`; false when it was not active. */
  deactivate(name: string, now = Date.now()): boolean {
    const a = this.active.get(name);
    if (a === undefined) return false;
    this.active.delete(name);
    const entry: AlarmHistoryEntry = { ...record(a), activated: false, clear_at: formatDatetime(now) };
    this.cleared.push(entry);
    if (this.cleared.length > HISTORY_LIMIT) this.cleared.splice(0, this.cleared.length - HISTORY_LIMIT);
    this.broker.logger.warn({ alarm: name }, "alarm cleared");
    this.publish("clear", entry);
    return true;
  }

  isActive(name: string): boolean {
    return this.active.has(name);
  }

  /** Present alarms of this node, oldest first (empty when none). */
  present(): AlarmRecord[] {
    return [...this.active.values()].map(record);
  }

  /** Cleared alarms, oldest first. */
  history(): AlarmHistoryEntry[] {
    return this.cleared.map((e) => ({ ...e }));
  }

  private publish(what: "alert" | "clear", body: AlarmRecord): void {
    publishSys(this.broker, sysTopic(this.broker.nodeName, `alarms/${what}`), JSON.stringify(body));
  }
}

function record(a: Active): AlarmRecord {
  return {
    id: a.name,
    name: a.name,
    desc: a.desc,
    message: a.desc,
    details: { ...a.details },
    activate_at: formatDatetime(a.at),
    activated: true,
  };
}
