// Shared fixtures for the conformance tests: a node per describe block, MQTT.js clients with an
// inbox attached before CONNECT (nothing sent right after CONNACK is missed), a raw MQTT client
// over a plain socket (exact packets, no automatic acks), barriers and unique client ids.
// Everything opened through these helpers is closed by `cleanup()` (afterEach).

import { connect as netConnect, type Socket } from "node:net";
import mqtt, { type IClientOptions, type MqttClient } from "mqtt";
import mqttPacket, {
  type IConnackPacket,
  type IConnectPacket,
  type IDisconnectPacket,
  type IPublishPacket,
  type ISubackPacket,
  type ISubscription,
  type Packet,
} from "mqtt-packet";
import { afterAll, afterEach, beforeAll } from "vitest";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { waitUntil as poll } from "../helpers/wait.ts";

export type Proto = 4 | 5;
const WAIT = 5000;

let counter = 0;
/** A client id unique in this run (short enough for the 23-character limit of 3.1). */
export function uid(tag = "c"): string {
  counter++;
  return `${tag}${counter}x${Math.random().toString(36).slice(2, 7)}`;
}

const open = new Set<() => Promise<void> | void>();

/** Ends every client and socket opened since the last cleanup. */
export async function cleanup(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map(async (f) => f()));
}

/** Starts a node with `set` before the block's tests and closes it after them. */
export function useNode(set: Record<string, string> = {}): () => TestNode {
  let node: TestNode | undefined;
  beforeAll(async () => {
    node = await startTestNode({ set });
  });
  afterEach(cleanup);
  afterAll(async () => {
    await cleanup();
    await node?.close();
  });
  return () => {
    if (node === undefined) throw new Error("node not started");
    return node;
  };
}

/** Polls `pred` until it holds (a condition, not a fixed delay). */
export function waitUntil(pred: () => boolean | Promise<boolean>, what = "condition", timeout = WAIT): Promise<void> {
  return poll(pred, what, timeout);
}

function withTimeout<T>(p: Promise<T>, what: string, timeout = WAIT): Promise<T> {
  let t: NodeJS.Timeout | undefined;
  const timer = new Promise<never>((_, reject) => {
    t = setTimeout(() => reject(new Error(`timed out waiting for ${what}`)), timeout);
  });
  return Promise.race([p, timer]).finally(() => clearTimeout(t));
}

// ---- MQTT.js clients ---------------------------------------------------------------------------

export interface Msg {
  topic: string;
  payload: string;
  packet: IPublishPacket;
}

/** Every message a client received, in order, with waits on what comes next. */
export class Inbox {
  readonly all: Msg[] = [];
  private cursor = 0;
  private wake: (() => void)[] = [];

  push(m: Msg): void {
    this.all.push(m);
    for (const w of this.wake.splice(0)) w();
  }

  private async until(pred: () => boolean, what: string, timeout: number): Promise<void> {
    const end = Date.now() + timeout;
    while (!pred()) {
      const left = end - Date.now();
      if (left <= 0) throw new Error(`timed out waiting for ${what}; got ${this.describe()}`);
      await withTimeout(new Promise<void>((r) => this.wake.push(r)), what, left).catch(() => undefined);
    }
  }

  describe(): string {
    return JSON.stringify(this.all.map((m) => `${m.topic}:${m.payload}`));
  }

  /** The next message not taken yet. */
  async next(timeout = WAIT): Promise<Msg> {
    await this.until(() => this.all.length > this.cursor, "a message", timeout);
    return this.all[this.cursor++];
  }

  /** The next n messages not taken yet. */
  async take(n: number, timeout = WAIT): Promise<Msg[]> {
    await this.until(() => this.all.length >= this.cursor + n, `${n} messages`, timeout);
    const out = this.all.slice(this.cursor, this.cursor + n);
    this.cursor += n;
    return out;
  }

  /** The first message (taken or not) matching `pred`. */
  async waitFor(pred: (m: Msg) => boolean, what = "a matching message", timeout = WAIT): Promise<Msg> {
    await this.until(() => this.all.some(pred), what, timeout);
    return this.all.find(pred) as Msg;
  }

  payloads(): string[] {
    return this.all.map((m) => m.payload);
  }
}

export interface Client {
  id: string;
  c: MqttClient;
  connack: IConnackPacket;
  inbox: Inbox;
  /** Resolves when the connection closes. */
  closed: Promise<void>;
  /** Resolves with a server DISCONNECT (5.0). */
  disconnect: Promise<IDisconnectPacket>;
}

/** Connects an MQTT.js client (no automatic reconnect) and waits for its CONNACK. */
export async function connect(node: TestNode, protocolVersion: Proto, opts: IClientOptions = {}): Promise<Client> {
  const id = opts.clientId ?? uid();
  const c = mqtt.connect(node.url, {
    protocolVersion,
    reconnectPeriod: 0,
    connectTimeout: WAIT,
    ...opts,
    clientId: id,
  });
  open.add(() => c.endAsync(true).catch(() => undefined));
  const inbox = new Inbox();
  c.on("message", (topic, payload, packet) => inbox.push({ topic, payload: payload.toString(), packet }));
  c.on("error", () => undefined);
  const closed = new Promise<void>((r) => c.once("close", () => r()));
  const disconnect = new Promise<IDisconnectPacket>((r) => c.once("disconnect", (p) => r(p)));
  const connack = await withTimeout(
    new Promise<IConnackPacket>((resolve, reject) => {
      c.once("connect", resolve);
      c.once("error", reject);
      c.once("close", () => reject(new Error("closed before CONNACK")));
    }),
    "CONNACK",
  );
  return { id, c, connack, inbox, closed, disconnect };
}

/**
 * Publishes a marker from `pub` to `topic` (which `sub` must match) and waits for it at `sub`:
 * whatever the broker was going to send `sub` before the marker has arrived by then. Returns the
 * payloads that arrived before the marker, from index `from` of the inbox.
 */
export async function barrier(pub: Client, sub: Client, topic: string, from = 0): Promise<string[]> {
  const marker = `marker-${uid()}`;
  await pub.c.publishAsync(topic, marker, { qos: 1 });
  const m = await sub.inbox.waitFor((x) => x.payload === marker, `marker on ${topic}`);
  return sub.inbox.all.slice(from, sub.inbox.all.indexOf(m)).map((x) => x.payload);
}

// ---- raw MQTT client ---------------------------------------------------------------------------

type Pred = (p: Packet) => boolean;

/** An MQTT client that sends exactly what it is told and acknowledges nothing by itself. */
export class Raw {
  private readonly socket: Socket;
  private readonly parser;
  private queue: { seq: number; p: Packet }[] = [];
  private seq = 0;
  private waiters: { pred: Pred; resolve: (x: { seq: number; p: Packet }) => void }[] = [];
  private closeWaiters: (() => void)[] = [];
  private nextSubId = 60000;
  private readonly counts = new Map<string, number>();
  isClosed = false;
  /** When the socket closed (ms since the epoch). */
  closedAt = 0;

  private constructor(
    socket: Socket,
    readonly version: 3 | 4 | 5,
  ) {
    this.socket = socket;
    this.parser = mqttPacket.parser({ protocolVersion: version });
    this.parser.on("packet", (p: Packet) => this.onPacket(p));
    this.parser.on("error", () => this.socket.destroy());
    socket.on("data", (b: Buffer) => this.parser.parse(b));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      this.isClosed = true;
      this.closedAt = Date.now();
      for (const w of this.closeWaiters.splice(0)) w();
    });
    open.add(() => void socket.destroy());
  }

  /** Opens a TCP connection to the node (sends nothing). */
  static async open(node: TestNode, version: 3 | 4 | 5 = 4): Promise<Raw> {
    const socket = netConnect(node.port("tcp"), "127.0.0.1");
    await withTimeout(
      new Promise<void>((resolve, reject) => {
        socket.once("connect", resolve);
        socket.once("error", reject);
      }),
      "TCP connect",
    );
    socket.setNoDelay(true);
    return new Raw(socket, version);
  }

  /** Opens a connection and sends CONNECT; returns the client and the CONNACK. */
  static async connect(
    node: TestNode,
    version: Proto,
    connect: Partial<IConnectPacket> = {},
  ): Promise<{ raw: Raw; connack: IConnackPacket }> {
    const raw = await Raw.open(node, version);
    const connack = await raw.sendConnect(connect);
    return { raw, connack };
  }

  async sendConnect(connect: Partial<IConnectPacket> = {}): Promise<IConnackPacket> {
    this.send({
      cmd: "connect",
      protocolId: "MQTT",
      protocolVersion: this.version as Proto,
      clean: true,
      keepalive: 0,
      clientId: uid("r"),
      ...connect,
    } as IConnectPacket);
    return (await this.next("connack")) as IConnackPacket;
  }

  private onPacket(p: Packet): void {
    this.counts.set(p.cmd, (this.counts.get(p.cmd) ?? 0) + 1);
    const item = { seq: ++this.seq, p };
    const i = this.waiters.findIndex((w) => w.pred(p));
    if (i >= 0) this.waiters.splice(i, 1)[0].resolve(item);
    else this.queue.push(item);
  }

  send(p: Packet): void {
    this.socket.write(mqttPacket.generate(p, { protocolVersion: this.version }));
  }

  sendBytes(b: Buffer): void {
    this.socket.write(b);
  }

  /** How many packets of `cmd` arrived so far (taken or not). */
  received(cmd: Packet["cmd"]): number {
    return this.counts.get(cmd) ?? 0;
  }

  /** Stops reading the socket (the broker's writes to it back up), until resumeReading(). */
  pauseReading(): void {
    this.socket.pause();
  }

  resumeReading(): void {
    this.socket.resume();
  }

  private async nextItem(pred: Pred, what: string, timeout: number): Promise<{ seq: number; p: Packet }> {
    const i = this.queue.findIndex((x) => pred(x.p));
    if (i >= 0) return this.queue.splice(i, 1)[0];
    let waiter: { pred: Pred; resolve: (x: { seq: number; p: Packet }) => void } | undefined;
    const got = new Promise<{ seq: number; p: Packet }>((resolve) => {
      waiter = { pred, resolve };
      this.waiters.push(waiter);
    });
    try {
      return await withTimeout(got, `${what}; queued: ${JSON.stringify(this.queue.map((x) => x.p.cmd))}`, timeout);
    } finally {
      this.waiters = this.waiters.filter((w) => w !== waiter);
    }
  }

  /** The next packet of `cmd` (or matching `pred`), taken out of the queue. */
  async next(what: Packet["cmd"] | Pred, timeout = WAIT): Promise<Packet> {
    const pred: Pred = typeof what === "string" ? (p) => p.cmd === what : what;
    return (await this.nextItem(pred, typeof what === "string" ? what : "packet", timeout)).p;
  }

  async nextPublish(timeout = WAIT): Promise<IPublishPacket> {
    return (await this.next("publish", timeout)) as IPublishPacket;
  }

  /**
   * PINGREQ/PINGRESP round trip: returns (and takes) every packet not taken yet that arrived
   * before the PINGRESP, i.e. everything the broker had sent on this connection by then.
   */
  async barrier(): Promise<Packet[]> {
    this.send({ cmd: "pingreq" });
    const resp = await this.nextItem((p) => p.cmd === "pingresp", "pingresp", WAIT);
    const before = this.queue.filter((x) => x.seq < resp.seq).map((x) => x.p);
    this.queue = this.queue.filter((x) => x.seq > resp.seq);
    return before;
  }

  async subscribe(
    subs: ISubscription[] | string,
    qos: 0 | 1 | 2 = 1,
    properties?: { subscriptionIdentifier?: number },
  ): Promise<ISubackPacket> {
    const subscriptions = typeof subs === "string" ? [{ topic: subs, qos }] : subs;
    const messageId = this.nextSubId++;
    this.send({ cmd: "subscribe", messageId, subscriptions, properties });
    return (await this.next((p) => p.cmd === "suback" && p.messageId === messageId)) as ISubackPacket;
  }

  async closed(timeout = WAIT): Promise<void> {
    if (this.isClosed) return;
    await withTimeout(new Promise<void>((r) => this.closeWaiters.push(r)), "socket close", timeout);
  }

  /** The server's DISCONNECT (5.0) followed by the close of the connection. */
  async disconnected(timeout = WAIT): Promise<IDisconnectPacket> {
    const p = (await this.next("disconnect", timeout)) as IDisconnectPacket;
    await this.closed(timeout);
    return p;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Waits until the broker no longer has a live connection for `clientId`. */
export async function offline(node: TestNode, clientId: string): Promise<void> {
  await waitUntil(() => node.services.clients.lookup(clientId).every((r) => !r.connected), `${clientId} offline`);
}

/** CONNECT options for a session that survives the connection (3.1.1 clean=false; 5.0 expiry). */
export function persistent(v: Proto, expiry = 300): IClientOptions {
  return v === 5 ? { clean: false, properties: { sessionExpiryInterval: expiry } } : { clean: false };
}

/** The same for a raw CONNECT. */
export function rawPersistent(v: Proto, clientId: string, expiry = 300): Partial<IConnectPacket> {
  return v === 5
    ? { clientId, clean: false, properties: { sessionExpiryInterval: expiry } }
    : { clientId, clean: false };
}
