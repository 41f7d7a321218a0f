// Retained messages for the API and CLI (`retainer info|topics|clean [<topic>]`): how many this
// node holds, their topics, and removing all of them or those matching a filter. The retainer
// plugin answers with nothing while it is unloaded.

import { validateTopicFilter } from "../mqtt/topic.ts";

/** What the service reads from the retainer (main.ts passes the Retainer plugin). */
export interface RetainedMessages {
  readonly count: number;
  topics(): string[];
  clean(filter?: string): number;
}

export type RetainerCleanOutcome = { ok: true; cleaned: number } | { ok: false; message: string };

export class RetainerService {
  constructor(private readonly retained: RetainedMessages) {}

  info(): { retained: number } {
    return { retained: this.retained.count };
  }

  topics(): string[] {
    return this.retained.topics().sort();
  }

  clean(filter?: string): RetainerCleanOutcome {
    if (filter !== undefined && !validateTopicFilter(filter, 0))
      return { ok: false, message: `invalid topic filter ${filter}` };
    return { ok: true, cleaned: this.retained.clean(filter) };
  }
}
