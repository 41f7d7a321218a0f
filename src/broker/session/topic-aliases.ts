// Topic Alias state of one Network Connection (MQTT 5.0):
//   InboundAliases  - client->server aliases, bounded by the Topic Alias
//                     Maximum the server sent in CONNACK.
//   OutboundAliases - server->client aliases, bounded by the Topic Alias
//                     Maximum the client sent in CONNECT.
// Create new instances per connection: mappings MUST NOT be carried from
// one Network Connection to another [MQTT-3.3.2-7].
//
// Spec references (MQTT 5.0, 3.3.2.3.4 Topic Alias):
//   [MQTT-3.3.2-7]  no carry-over between connections
//   [MQTT-3.3.2-8]  Topic Alias value 0 is never valid
//   [MQTT-3.3.2-11] server never sends an alias > the client's maximum
//   [MQTT-3.3.2-12] server accepts every alias in 1..its maximum
//   3.3.2.3.4       empty Topic Name with an unmapped alias: Protocol Error

export const ALIAS_INVALID = "invalid";

export class InboundAliases {
  private readonly max: number;
  /** Index = alias; allocated on first use. */
  private topics: (string | undefined)[] | null = null;

  /** @param max the Topic Alias Maximum sent in CONNACK (0 = aliases not allowed). */
  constructor(max: number) {
    this.max = max > 0 ? Math.min(Math.floor(max), 65535) : 0;
  }

  /** True when `alias` is in 1..max [MQTT-3.3.2-8], [MQTT-3.3.2-12]. */
  isValidAlias(alias: number): boolean {
    return Number.isInteger(alias) && alias >= 1 && alias <= this.max;
  }

  /**
   * Applies the Topic Alias of an incoming PUBLISH.
   * - alias 0 or > max: 'invalid' (DISCONNECT 0x94) [MQTT-3.3.2-8], [MQTT-3.3.2-12]
   * - non-empty topic: sets/replaces the mapping, returns topic
   * - empty topic, mapped alias: the mapped topic
   * - empty topic, unmapped alias: 'invalid' (Protocol Error 0x82, 3.3.2.3.4)
   * Note: a real topic named "invalid" also returns "invalid"; callers that
   * must tell the cases apart compare with `topic` or use resolveOrNull.
   */
  resolve(alias: number, topic: string): string | "invalid" {
    const r = this.resolveOrNull(alias, topic);
    return r === null ? ALIAS_INVALID : r;
  }

  /** Same as resolve, but null (unambiguous) instead of 'invalid'. */
  resolveOrNull(alias: number, topic: string): string | null {
    if (!this.isValidAlias(alias)) return null; // [MQTT-3.3.2-8], [MQTT-3.3.2-12]
    let topics = this.topics;
    if (topic.length > 0) {
      if (topics === null) this.topics = topics = new Array<string | undefined>(this.max + 1).fill(undefined);
      topics[alias] = topic;
      return topic;
    }
    if (topics === null) return null; // 3.3.2.3.4: unmapped alias
    const mapped = topics[alias];
    return mapped === undefined ? null : mapped;
  }

  clear(): void {
    this.topics = null;
  }
}

export interface OutboundAlias {
  alias: number;
  /** The alias was sent with this topic before; the topic may be sent empty. */
  known: boolean;
}

export class OutboundAliases {
  private readonly max: number;
  /** topic -> frozen { alias, known: true } reused for every later lookup. */
  private readonly byTopic = new Map<string, OutboundAlias>();

  /** @param max the Topic Alias Maximum the client sent in CONNECT (0 = none). */
  constructor(max: number) {
    this.max = max > 0 ? Math.min(Math.floor(max), 65535) : 0;
  }

  /**
   * Alias to use for `topic` on an outgoing PUBLISH. First come first
   * served up to max, no eviction. `known: false` means a new alias was
   * assigned: send the full topic together with the alias. `known: true`
   * means the mapping was sent before: the topic may be sent empty.
   * null when max is 0 or every alias is taken by another topic.
   * Aliases are in 1..max [MQTT-3.3.2-8], [MQTT-3.3.2-11].
   * The returned object must not be modified (known entries are shared).
   */
  lookup(topic: string): { alias: number; known: boolean } | null {
    const found = this.byTopic.get(topic);
    if (found !== undefined) return found;
    const size = this.byTopic.size;
    if (size >= this.max) return null;
    const alias = size + 1; // 1..max [MQTT-3.3.2-8], [MQTT-3.3.2-11]
    this.byTopic.set(topic, Object.freeze({ alias, known: true }));
    return { alias, known: false };
  }

  /**
   * Takes back the alias just assigned to `topic` when the PUBLISH that would have carried the
   * mapping was not sent (too large for the client): the client never learnt it.
   */
  forget(topic: string): void {
    const found = this.byTopic.get(topic);
    if (found !== undefined && found.alias === this.byTopic.size) this.byTopic.delete(topic);
  }

  /** Number of aliases assigned so far. */
  get size(): number {
    return this.byTopic.size;
  }

  clear(): void {
    this.byTopic.clear();
  }
}
