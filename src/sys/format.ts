// Text forms the node shows for time: the spec's `YYYY-MM-DD HH:MM:SS` timestamps (local time, as
// the family shows them) and the human-readable uptime. Used by $SYS, alarms and the service views.

const pad = (n: number): string => (n < 10 ? `0${n}` : String(n));

export function formatDatetime(ms: number): string {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** `3 days, 2 hours, 1 minutes, 5 seconds` with leading zero units dropped. */
export function formatUptime(ms: number): string {
  let s = Math.floor(ms / 1000);
  const days = Math.floor(s / 86400);
  s -= days * 86400;
  const hours = Math.floor(s / 3600);
  s -= hours * 3600;
  const minutes = Math.floor(s / 60);
  s -= minutes * 60;
  const parts: string[] = [];
  if (days > 0) parts.push(`${days} days`);
  if (days > 0 || hours > 0) parts.push(`${hours} hours`);
  if (days > 0 || hours > 0 || minutes > 0) parts.push(`${minutes} minutes`);
  parts.push(`${s} seconds`);
  return parts.join(", ");
}
