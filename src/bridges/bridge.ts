// One bridge: forwards the messages of its forward filters to the other side through its connector,
// and (MQTT bridges) publishes here what its remote subscriptions receive.
//
// States: Stopped (nothing is forwarded or cached) -> start -> Connecting (messages of forwarded
// topics are cached in the queue) <-> Running (connected: the queue is sent in batches, at most
// `max_inflight_batches` unacknowledged) -> stop -> Stopped. A failed or lost connection is tried
// again after `reconnect_interval`; batches in flight when it is lost are sent again, in order,
// on the next connection, and a batch unacknowledged for `retry_interval` takes the connection as
// stalled and reconnects. The queue (memory, or on disk with `queue.replayq_dir`) is acknowledged
// in order as batches complete, so an on-disk cache survives a restart with every message not yet
// acknowledged by the other side (at least once).

import type { Message, NewMessage, QoS } from "../broker/types.ts";
import { decodeMessage, encodeMessage } from "../cluster/link/message-codec.ts";
import { BufReader, BufWriter } from "../cluster/link/wire.ts";
import { matchTopic } from "../mqtt/topic.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { Span } from "../telemetry/tracing.ts";
import type { BridgeConfig, BridgeSubscription } from "./bridge-conf.ts";
import type { BridgeTracing } from "./bridge-tracing.ts";
import type { Connector, Outgoing } from "./connector.ts";
import { ReplayQueue } from "./replay-queue.ts";

export type BridgeStatus = "Running" | "Connecting" | "Stopped";

/** The header that marks a message a bridge received, so that the same bridge never sends it back. */
export const BRIDGE_HEADER = "bridge";

export interface BridgeInfo {
  name: string;
  kind: "mqtt" | "rpc";
  address: string;
  status: BridgeStatus;
  forwards: string[];
  subscriptions: BridgeSubscription[];
  /** Messages cached and not yet sent. */
  queued: number;
  /** Messages sent and not yet acknowledged. */
  inflight: number;
  /** Messages the other side acknowledged (or, QoS 0, that were written). */
  forwarded: number;
  /** Messages of remote subscriptions published here. */
  received: number;
  /** Messages dropped because the cache was full. */
  dropped: number;
  /** Messages the remote broker refused (5.0 reason code 0x80 or above). */
  refused: number;
}

export interface BridgeEnv {
  logger: Logger;
  tracing: BridgeTracing | null;
  /** Publishes a message of a remote subscription on this node. */
  publish(m: NewMessage, headers: Record<string, unknown>): void;
  connector(cfg: BridgeConfig, onRefused: (topic: string, reason: string) => void): Connector;
}

interface Batch {
  ackRef: number;
  items: Outgoing[];
  sentAt: number;
  done: boolean;
  spans: (Span | undefined)[] | undefined;
}

export class Bridge {
  private state: BridgeStatus = "Stopped";
  private connector: Connector | undefined;
  private queue: ReplayQueue | undefined;
  /** Batches sent (or to send again) not yet acknowledged, oldest first. */
  private batches: Batch[] = [];
  private reconnectTimer: NodeJS.Timeout | undefined;
  private retryTimer: NodeJS.Timeout | undefined;
  private pumpQueued = false;
  private readonly forwards: string[];
  private readonly subs = new Map<string, QoS>();
  private readonly writer = new BufWriter(1024);
  /** `dropped`: records unreadable or expired when taken from the cache (the cache counts its own). */
  private counts = { forwarded: 0, received: 0, refused: 0, dropped: 0 };
  private disposed = false;
  private lastErrorLog = 0;
  /** Connections made: a reconnection scheduled for an older one does not run. */
  private generation = 0;
  /** Waiters of whenRunning(), told at every change of state. */
  private waiters: (() => void)[] = [];

  constructor(
    readonly cfg: BridgeConfig,
    private readonly env: BridgeEnv,
  ) {
    this.forwards = [...cfg.forwards];
    for (const s of cfg.subscriptions) this.subs.set(s.topic, s.qos);
  }

  get name(): string {
    return this.cfg.name;
  }

  get status(): BridgeStatus {
    return this.state;
  }

  private setState(s: BridgeStatus): void {
    this.state = s;
    for (const w of this.waiters.splice(0)) w();
  }

  /** Whether the bridge is Running, waiting at most `ms` for it while it is Connecting. */
  async whenRunning(ms: number): Promise<boolean> {
    const end = Date.now() + ms;
    while (this.state === "Connecting" && Date.now() < end) {
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, end - Date.now());
        this.waiters.push(() => {
          clearTimeout(t);
          resolve();
        });
      });
    }
    return this.state === "Running";
  }

  info(): BridgeInfo {
    let inflight = 0;
    for (const b of this.batches) inflight += b.items.length;
    return {
      name: this.cfg.name,
      kind: this.cfg.kind,
      address: this.cfg.address,
      status: this.state,
      forwards: [...this.forwards],
      subscriptions: this.subscriptions(),
      queued: this.queue?.count ?? 0,
      inflight,
      forwarded: this.counts.forwarded,
      received: this.counts.received,
      refused: this.counts.refused,
      dropped: (this.queue?.dropped ?? 0) + this.counts.dropped,
    };
  }

  subscriptions(): BridgeSubscription[] {
    return [...this.subs].map(([topic, qos]) => ({ topic, qos }));
  }

  forwardFilters(): readonly string[] {
    return this.forwards;
  }

  /** Starts the bridge; false when it was started already. */
  start(): boolean {
    if (this.state !== "Stopped" || this.disposed) return false;
    this.queue ??= ReplayQueue.open({
      dir: this.cfg.replayqDir,
      segBytes: this.cfg.replayqSegBytes,
      maxTotalBytes: this.cfg.maxQueueBytes,
    });
    this.setState("Connecting");
    // Messages popped before a restart come back from the cache; send them again in order.
    this.connect();
    this.retryTimer = setInterval(() => this.checkStalled(), Math.min(this.cfg.retryMs, 1000));
    this.retryTimer.unref();
    this.env.logger.info({ bridge: this.name, address: this.cfg.address }, "bridge started");
    return true;
  }

  /** Stops the bridge; false when it was not started. The cache is kept for the next start. */
  async stop(): Promise<boolean> {
    if (this.state === "Stopped") return false;
    this.setState("Stopped");
    clearTimeout(this.reconnectTimer);
    clearInterval(this.retryTimer);
    const c = this.connector;
    this.connector = undefined;
    await c?.close();
    this.failInflight(new Error("bridge stopped"));
    this.env.logger.info({ bridge: this.name }, "bridge stopped");
    return true;
  }

  /** Stops and closes the cache (plugin unload, node stop). */
  async dispose(): Promise<void> {
    this.disposed = true;
    await this.stop();
    this.queue?.close();
    this.queue = undefined;
    this.batches = [];
  }

  /** Whether a local message is one this bridge forwards. */
  matches(msg: Message): boolean {
    if (msg.sys || msg.headers?.[BRIDGE_HEADER] === this.name) return false;
    for (const f of this.forwards) if (matchTopic(f, msg.topic)) return true;
    return false;
  }

  /** Caches a message of a forwarded topic (called for every local publish while not Stopped). */
  offer(msg: Message): void {
    if (this.state !== "Stopped" && this.matches(msg)) this.enqueue(msg);
  }

  /** Caches a message to send (whatever its topic); false when the bridge is stopped. */
  enqueue(msg: Message): boolean {
    if (this.state === "Stopped") return false;
    const w = this.writer;
    w.pos = 0;
    encodeMessage(w, msg);
    (this.queue as ReplayQueue).append(Buffer.from(w.view()));
    this.schedulePump();
    return true;
  }

  /** A message the cache could not take (disk full, no descriptor): counted, logged at most every 10 s. */
  dropOnError(err: unknown): void {
    this.counts.dropped++;
    const now = Date.now();
    if (now - this.lastErrorLog < 10_000) return;
    this.lastErrorLog = now;
    this.env.logger.error({ err, bridge: this.name }, "bridge cache failed, message dropped");
  }

  addForward(filter: string): boolean {
    if (this.forwards.includes(filter)) return false;
    this.forwards.push(filter);
    return true;
  }

  delForward(filter: string): boolean {
    const i = this.forwards.indexOf(filter);
    if (i < 0) return false;
    this.forwards.splice(i, 1);
    return true;
  }

  /** False when the filter is subscribed with that QoS already. */
  addSubscription(topic: string, qos: QoS): boolean {
    if (this.subs.get(topic) === qos) return false;
    this.subs.set(topic, qos);
    this.connector?.subscribe(topic, qos);
    return true;
  }

  delSubscription(topic: string): boolean {
    if (!this.subs.delete(topic)) return false;
    this.connector?.unsubscribe(topic);
    return true;
  }

  private connect(): void {
    this.generation++;
    const c = this.env.connector(this.cfg, (topic, reason) => this.refused(topic, reason));
    for (const [topic, qos] of this.subs) c.subscribe(topic, qos);
    this.connector = c;
    c.open({
      up: () => {
        if (this.connector !== c) return;
        this.setState("Running");
        this.env.logger.info({ bridge: this.name, address: this.cfg.address }, "bridge connected");
        // What was in flight on the last connection goes first, in order.
        for (const b of this.batches) if (!b.done) this.send(b);
        this.pump();
      },
      down: (reason) => {
        if (this.connector !== c) return;
        this.connector = undefined;
        this.failInflight(new Error(reason));
        if (this.state === "Stopped") return;
        this.setState("Connecting");
        this.env.logger.warn(
          { bridge: this.name, address: this.cfg.address, reason, retryInMs: this.cfg.reconnectMs },
          "bridge disconnected",
        );
        this.reconnectTimer = setTimeout(() => {
          if (this.state !== "Stopped") this.connect();
        }, this.cfg.reconnectMs);
        this.reconnectTimer.unref();
      },
      message: (topic, payload, qos, retain, properties) => {
        if (this.connector !== c) return;
        this.counts.received++;
        this.env.publish({ topic, payload, qos, retain, properties }, { [BRIDGE_HEADER]: this.name });
      },
    });
  }

  private refused(topic: string, reason: string): void {
    this.counts.refused++;
    this.env.logger.warn(
      { bridge: this.name, topic, reason },
      "bridge message or subscription refused by the remote broker",
    );
  }

  private schedulePump(): void {
    if (this.pumpQueued || this.state !== "Running") return;
    this.pumpQueued = true;
    setImmediate(() => {
      this.pumpQueued = false;
      this.pump();
    });
  }

  /** Sends batches from the cache while connected and the inflight limit allows. */
  private pump(): void {
    const q = this.queue;
    while (this.state === "Running" && q !== undefined && this.batches.length < this.cfg.maxInflightBatches) {
      const popped = q.pop(this.cfg.batchCount, this.cfg.batchBytes);
      if (popped === null) return;
      const items: Outgoing[] = [];
      for (const bytes of popped.items) {
        const o = this.outgoing(bytes);
        if (o !== undefined) items.push(o);
      }
      const batch: Batch = { ackRef: popped.ackRef, items, sentAt: 0, done: items.length === 0, spans: undefined };
      this.batches.push(batch);
      if (batch.done) this.ackDone();
      else this.send(batch);
    }
  }

  /** A cached record as a message to send; undefined (dropped) when unreadable or expired. */
  private outgoing(bytes: Buffer): Outgoing | undefined {
    let msg: Message;
    try {
      msg = decodeMessage(new BufReader(bytes));
    } catch (err) {
      this.counts.dropped++;
      this.env.logger.warn({ err, bridge: this.name }, "bridge cache record unreadable, dropped");
      return undefined;
    }
    if (msg.expiresAt !== 0 && msg.expiresAt <= Date.now()) {
      this.counts.dropped++;
      return undefined;
    }
    const topic = this.cfg.mountpoint === "" ? msg.topic : `${this.cfg.mountpoint}${msg.topic}`;
    return { msg, topic };
  }

  private send(batch: Batch): void {
    const c = this.connector;
    if (c === undefined) return;
    batch.sentAt = Date.now();
    const t = this.env.tracing;
    if (t !== null) {
      batch.spans = batch.items.map((o) => {
        const span = t.send(o.msg, o.topic, this.name, this.cfg.address);
        o.trace = span === undefined ? undefined : t.carrier(span);
        return span;
      });
    }
    c.send(batch.items, (err) => {
      if (this.connector !== c || batch.done) return;
      this.endSpans(batch, err);
      // Sent again on the next connection: the lost one's down() comes, or, on a connection that
      // stays up (a 5.0 reason code worth another try), the stall check reconnects.
      if (err !== undefined) return;
      batch.done = true;
      this.counts.forwarded += batch.items.length;
      this.ackDone();
      this.schedulePump();
    });
  }

  private endSpans(batch: Batch, err: Error | undefined): void {
    const t = this.env.tracing;
    if (t === null || batch.spans === undefined) return;
    for (const s of batch.spans) if (s !== undefined) t.end(s, err);
    batch.spans = undefined;
  }

  /** Acknowledges the cache up to the last batch done with every earlier one done too. */
  private ackDone(): void {
    let n = 0;
    while (n < this.batches.length && this.batches[n].done) n++;
    if (n === 0) return;
    this.queue?.ack(this.batches[n - 1].ackRef);
    this.batches = this.batches.slice(n);
  }

  /** Batches in flight on a connection that is gone: their spans fail; they are sent again later. */
  private failInflight(err: Error): void {
    for (const b of this.batches) if (!b.done) this.endSpans(b, err);
  }

  private checkStalled(): void {
    const oldest = this.batches.find((b) => !b.done);
    if (this.state !== "Running" || oldest === undefined || Date.now() - oldest.sentAt < this.cfg.retryMs) return;
    this.env.logger.warn(
      { bridge: this.name, waitedMs: Date.now() - oldest.sentAt },
      "bridge batch not acknowledged, reconnecting",
    );
    const c = this.connector;
    this.connector = undefined;
    this.failInflight(new Error("not acknowledged within retry_interval"));
    this.setState("Connecting");
    const generation = this.generation;
    void c?.close().finally(() => {
      // Not when a stop (and maybe a start) came meanwhile: that start connected already.
      if (this.state === "Connecting" && this.connector === undefined && this.generation === generation) this.connect();
    });
  }
}
