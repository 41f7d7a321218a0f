// Message tracing for the CLI (`trace start client <clientid> <file> <level>`, `trace start topic
// <filter> <file> <level>`, `trace list`, `trace stop client|topic ...`): validates the request
// and answers with an outcome the CLI prints; the tracing itself is sys/tracer.ts.

import { parseSharedFilter, validateTopicFilter } from "../mqtt/topic.ts";
import { isTraceLevel, TRACE_LEVELS } from "../sys/trace-format.ts";
import type { TraceInfo, Tracer } from "../sys/tracer.ts";

export type TraceOutcome =
  | { ok: true }
  | { ok: false; error: "already_traced" | "not_found" | "bad_level" | "bad_filter" | "bad_file"; message: string };

const fail = (error: Exclude<TraceOutcome, { ok: true }>["error"], message: string): TraceOutcome => ({
  ok: false,
  error,
  message,
});

export class TraceService {
  constructor(private readonly tracer: Tracer) {}

  startClient(clientId: string, file: string, level = "debug"): TraceOutcome {
    if (!isTraceLevel(level)) return fail("bad_level", `level must be one of ${TRACE_LEVELS.join(", ")}`);
    return this.open(() => this.tracer.startClient(clientId, file, level), `client ${clientId}`);
  }

  startTopic(filter: string, file: string, level = "debug"): TraceOutcome {
    if (!isTraceLevel(level)) return fail("bad_level", `level must be one of ${TRACE_LEVELS.join(", ")}`);
    if (!validateTopicFilter(filter, 0) || parseSharedFilter(filter) !== null)
      return fail("bad_filter", `invalid topic filter ${filter}`);
    return this.open(() => this.tracer.startTopic(filter, file, level), `topic ${filter}`);
  }

  private open(start: () => boolean, what: string): TraceOutcome {
    try {
      return start() ? { ok: true } : fail("already_traced", `${what} is traced already`);
    } catch (err) {
      return fail("bad_file", err instanceof Error ? err.message : String(err));
    }
  }

  async stopClient(clientId: string): Promise<TraceOutcome> {
    return (await this.tracer.stopClient(clientId))
      ? { ok: true }
      : fail("not_found", `client ${clientId} is not traced`);
  }

  async stopTopic(filter: string): Promise<TraceOutcome> {
    return (await this.tracer.stopTopic(filter)) ? { ok: true } : fail("not_found", `topic ${filter} is not traced`);
  }

  list(): TraceInfo[] {
    return this.tracer.list();
  }
}
