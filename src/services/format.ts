// Formatting shared by the service views: the spec's `YYYY-MM-DD HH:MM:SS` timestamps and the
// uptime text. They live in sys/format.ts (the $SYS publisher and alarms need them too, and a
// feature does not import the service layer); re-exported here for the views.

export { formatDatetime, formatUptime } from "../sys/format.ts";
