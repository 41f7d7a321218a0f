// One trace line per event: `<ISO time> [<level>] <who> <RECV|SEND> <PACKET>(field=value, ...)`.
// Packets are shown with mqtt-packet's field names; payloads and other bytes as JSON text of their
// UTF-8 reading (one line whatever they hold); passwords are masked.

import type { Packet } from "mqtt-packet";

export const TRACE_LEVELS = ["debug", "info", "notice", "warning", "error", "critical"] as const;
export type TraceLevel = (typeof TRACE_LEVELS)[number];

export function isTraceLevel(s: string): s is TraceLevel {
  return (TRACE_LEVELS as readonly string[]).includes(s);
}

/** True when a trace at `level` records a line of severity `line`. */
export function records(level: TraceLevel, line: TraceLevel): boolean {
  return TRACE_LEVELS.indexOf(line) >= TRACE_LEVELS.indexOf(level);
}

/** Plain text when it keeps the line readable, else JSON-quoted (control characters, quotes). */
function text(s: string): string {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) return JSON.stringify(s);
  }
  return s;
}

function bufferReplacer(_k: string, v: unknown): unknown {
  if (typeof v === "object" && v !== null && (v as { type?: unknown }).type === "Buffer") {
    const data = (v as { data?: unknown }).data;
    if (Array.isArray(data)) return Buffer.from(data).toString("utf8");
  }
  return v;
}

function value(v: unknown): string {
  if (Buffer.isBuffer(v)) return JSON.stringify(v.toString("utf8"));
  if (typeof v === "string") return text(v);
  if (typeof v === "object") return JSON.stringify(v, bufferReplacer);
  return String(v);
}

/** Fixed-header flags: meaningful on PUBLISH only (the codec sets them on every packet). */
const FLAGS = new Set(["retain", "qos", "dup"]);

const isEmptyObject = (v: unknown): boolean =>
  typeof v === "object" && v !== null && !Buffer.isBuffer(v) && Object.keys(v).length === 0;

/** `PUBLISH(qos=1, topic=a/b, payload="hi", messageId=3, ...)`. */
export function formatPacket(p: Packet): string {
  const parts: string[] = [];
  const publish = p.cmd === "publish";
  for (const [k, v] of Object.entries(p)) {
    if (k === "cmd" || k === "length" || v === undefined || v === null || isEmptyObject(v)) continue;
    if (!publish && FLAGS.has(k)) continue;
    parts.push(k === "password" ? "password=******" : `${k}=${value(v)}`);
  }
  return `${p.cmd.toUpperCase()}(${parts.join(", ")})`;
}

export function traceLine(level: TraceLevel, who: string, event: string, now = Date.now()): string {
  return `${new Date(now).toISOString()} [${level}] ${text(who)} ${event}\n`;
}
