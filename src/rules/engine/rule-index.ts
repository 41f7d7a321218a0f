// The index the hooks look rules up in: a topic trie of the FROM topic filters (message.publish
// of a matching topic) and a map from event key to the rules on that event. Rebuilt whole when a
// rule changes (rare) and swapped in, so a lookup never sees a half-built index.

import { TopicTrie } from "../../broker/router/topic-trie.ts";
import type { EventKey } from "../event-names.ts";
import type { CompiledRule } from "../runtime/compile.ts";

export interface Indexed {
  readonly id: string;
  readonly compiled: CompiledRule;
}

export class RuleIndex<R extends Indexed> {
  readonly trie = new TopicTrie<R[]>();
  readonly events = new Map<EventKey, R[]>();
  topicCount = 0;

  constructor(rules: Iterable<R>) {
    for (const r of rules) {
      for (const f of r.compiled.sources.topics) {
        const list = this.trie.get(f);
        if (list === undefined) this.trie.set(f, [r]);
        else if (!list.includes(r)) list.push(r);
        this.topicCount++;
      }
      for (const k of r.compiled.sources.events) {
        const list = this.events.get(k);
        if (list === undefined) this.events.set(k, [r]);
        else if (!list.includes(r)) list.push(r);
      }
    }
  }

  /** Rules whose topic filters match `topic`, each once. */
  matchTopic(topic: string, out: R[]): void {
    if (this.topicCount === 0) return;
    this.trie.match(topic, (rules) => {
      for (const r of rules) if (!out.includes(r)) out.push(r);
    });
  }

  /** Event keys some rule is on (message.publish also when any topic filter is indexed). */
  keys(): Set<EventKey> {
    const s = new Set(this.events.keys());
    if (this.topicCount > 0) s.add("message.publish");
    return s;
  }
}
