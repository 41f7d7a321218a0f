// svc_retainer: retained messages [MQTT-3.3.1-5..12]. On `message.publish` a retained message is
// stored, replaced, or deleted by an empty payload; on `session.subscribed` the matching retained
// messages go to the new subscription per 5.0 Retain Handling (0 always, 1 only if new, 2 never),
// never to shared subscriptions (a batch at a time when there are many). Storage `ram` or `disc`
// (kept across restarts).

import { join } from "node:path";
import type { Broker } from "../broker/broker.ts";
import type { SessionHandle } from "../broker/hookpoints.ts";
import { M } from "../broker/metrics.ts";
import type { ClientInfo, Message, SubOpts } from "../broker/types.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { ownCopyOf } from "../mqtt/bytes.ts";
import type { Plugin } from "../plugins/registry.ts";
import { DiscRetainedStore } from "./disc-store.ts";
import { MemoryRetainedStore } from "./memory-store.ts";
import type { RetainedStore } from "./retained-store.ts";
import type { TrieCursor } from "./topic-trie.ts";

export interface RetainerSettings {
  storageType: "ram" | "disc" | "disc_only";
  /** 0 = unlimited. */
  maxRetainedMessages: number;
  maxPayloadSize: number;
  /** Default expiry of retained messages (ms), 0 = never. */
  expiryInterval: number;
  dataDir: string;
}

const OWNER = "svc_retainer";

/** Retained messages delivered to a new subscription per turn of the event loop. */
export const RETAINED_BATCH = 1000;

export class Retainer implements Plugin {
  readonly name = OWNER;
  readonly version = "0.1.0";
  readonly description = "Retained messages: store, replace, delete, deliver on subscribe";
  readonly type = "feature" as const;
  private store: RetainedStore | null = null;

  constructor(
    private readonly broker: Broker,
    private readonly settings: RetainerSettings,
  ) {}

  load(): void {
    this.store =
      this.settings.storageType === "ram"
        ? new MemoryRetainedStore()
        : new DiscRetainedStore(join(this.settings.dataDir, "retainer"));
    const hooks = this.broker.hooks;
    // Only retained messages concern it.
    hooks.add("message.publish", (msg: Message) => this.onPublish(msg, false), PRIORITY.retainer, OWNER, {
      ignoresSystem: true,
    });
    hooks.add(
      "session.subscribed",
      (_c: ClientInfo, filter: string, opts: SubOpts, isNew: boolean, s: SessionHandle) =>
        this.onSubscribed(filter, opts, isNew, s),
      PRIORITY.retainer,
      OWNER,
    );
  }

  async unload(): Promise<void> {
    this.broker.hooks.removeOwner(OWNER);
    await this.store?.close();
    this.store = null;
  }

  private onPublish(msg: Message, replica = false): undefined {
    if (!msg.retain || this.store === null) return;
    const store = this.store;
    if (msg.payload.length === 0) {
      store.delete(msg.topic); // [MQTT-3.3.1-10]
      return;
    }
    if (this.settings.maxPayloadSize > 0 && msg.payload.length > this.settings.maxPayloadSize) {
      this.broker.logger.warn({ topic: msg.topic, size: msg.payload.length }, "retained payload too large, not stored");
      return;
    }
    const max = this.settings.maxRetainedMessages;
    if (max > 0 && store.size >= max && store.get(msg.topic) === undefined) {
      this.broker.logger.warn({ topic: msg.topic, max }, "retained message limit reached, not stored");
      return;
    }
    if (msg.expiresAt === 0 && this.settings.expiryInterval > 0) {
      msg = { ...msg, expiresAt: msg.timestamp + this.settings.expiryInterval };
    }
    // Kept until replaced: a payload viewing a larger read buffer is stored as a copy of its own.
    if (msg.payload.buffer.byteLength > msg.payload.length) msg = { ...msg, payload: ownCopyOf(msg.payload) };
    if (!replica) this.broker.metrics.inc(M.messagesRetained);
    store.put(msg);
  }

  private onSubscribed(filter: string, opts: SubOpts, isNew: boolean, s: SessionHandle): void {
    if (this.store === null || opts.share !== undefined) return;
    if (opts.rh === 2 || (opts.rh === 1 && !isNew)) return; // [MQTT-3.3.1-10..11]
    this.deliverFrom(this.store.cursor(filter), filter, opts, s);
  }

  /**
   * Delivers up to RETAINED_BATCH of the cursor's messages now and the rest a batch per turn of the
   * event loop, for as long as the subscription stands as it was made (not unsubscribed, not
   * re-subscribed, its session not ended): a filter matching a million retained messages does not
   * hold up every other client while they are matched and written.
   */
  private deliverFrom(cursor: TrieCursor, filter: string, opts: SubOpts, s: SessionHandle): void {
    const store = this.store;
    if (store === null) return;
    const now = Date.now();
    for (let n = 0; n < RETAINED_BATCH; n++) {
      const m = cursor.next();
      if (m === undefined) return;
      if (m.expiresAt !== 0 && m.expiresAt <= now) store.delete(m.topic);
      else s.deliverRetained(m, opts);
    }
    setImmediate(() => {
      if (this.store === store && s.subscribedWith(filter) === opts) this.deliverFrom(cursor, filter, opts, s);
    });
  }

  // ---- cluster replica ------------------------------------------------------------------------

  /** A retained message published on another node: stored (or deleted) as if published here. */
  storeReplica(msg: Message): void {
    this.onPublish(msg, true);
  }

  /** Every retained message held here (another node fetches them when it joins). */
  all(): Message[] {
    const store = this.store;
    if (store === null) return [];
    const now = Date.now();
    return store
      .topics()
      .map((t) => store.get(t) as Message)
      .filter((m) => m.expiresAt === 0 || m.expiresAt > now);
  }

  // ---- service-layer views (retainer info|topics|clean) --------------------------------------

  get count(): number {
    return this.store?.size ?? 0;
  }

  topics(): string[] {
    return this.store?.topics() ?? [];
  }

  /** Removes every retained message, or those matching `filter`; returns how many. */
  clean(filter?: string): number {
    const store = this.store;
    if (store === null) return 0;
    if (filter === undefined) {
      const n = store.size;
      store.clear();
      return n;
    }
    let n = 0;
    for (const m of store.match(filter)) if (store.delete(m.topic)) n++;
    return n;
  }

  lookup(topic: string): Message | undefined {
    return this.store?.get(topic);
  }
}
