// Message tracing (the CLI's `trace start|stop|list`): a client trace writes every packet of one
// client id to a file (client-trace.ts); a topic trace writes every message published to a topic
// matching its filter. Nothing is hooked and no connection carries a tracer while no trace runs,
// so tracing costs nothing then; the hooks are added with the first trace of a kind and removed
// with the last.

import type { Broker } from "../broker/broker.ts";
import type { Channel } from "../broker/channel/channel.ts";
import type { ClientInfo, Message } from "../broker/types.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { matchTopic } from "../mqtt/topic.ts";
import { ClientTrace } from "./client-trace.ts";
import { formatDatetime } from "./format.ts";
import { records, type TraceLevel, traceLine } from "./trace-format.ts";
import { TraceSink } from "./trace-sink.ts";

const CLIENT_OWNER = "svc_trace_client";
const TOPIC_OWNER = "svc_trace_topic";

export interface TraceInfo {
  type: "client" | "topic";
  /** Client id or topic filter. */
  name: string;
  file: string;
  level: TraceLevel;
  started_at: string;
}

interface TopicTrace {
  filter: string;
  level: TraceLevel;
  sink: TraceSink;
  startedAt: number;
}

export class Tracer {
  private readonly clients = new Map<string, ClientTrace>();
  private readonly topics = new Map<string, TopicTrace>();

  constructor(private readonly broker: Broker) {}

  /** Starts tracing `clientId` into `file`; false when it is traced already. Throws on a bad file. */
  startClient(clientId: string, file: string, level: TraceLevel): boolean {
    if (this.clients.has(clientId)) return false;
    const t = new ClientTrace(clientId, level, new TraceSink(file, this.broker.logger));
    if (this.clients.size === 0) this.hookClients();
    this.clients.set(clientId, t);
    const ch = this.broker.sessions.channel(clientId);
    if (ch !== undefined) t.attach(ch);
    return true;
  }

  async stopClient(clientId: string): Promise<boolean> {
    const t = this.clients.get(clientId);
    if (t === undefined) return false;
    this.clients.delete(clientId);
    for (const ch of this.broker.channels) t.detach(ch);
    if (this.clients.size === 0) this.broker.hooks.removeOwner(CLIENT_OWNER);
    await t.sink.close();
    return true;
  }

  /** Starts tracing messages published to topics matching `filter`; false when traced already. */
  startTopic(filter: string, file: string, level: TraceLevel): boolean {
    if (this.topics.has(filter)) return false;
    const t: TopicTrace = { filter, level, sink: new TraceSink(file, this.broker.logger), startedAt: Date.now() };
    if (this.topics.size === 0) {
      this.broker.hooks.add("message.publish", (m: Message) => this.onPublish(m), PRIORITY.tracing, TOPIC_OWNER);
    }
    this.topics.set(filter, t);
    return true;
  }

  async stopTopic(filter: string): Promise<boolean> {
    const t = this.topics.get(filter);
    if (t === undefined) return false;
    this.topics.delete(filter);
    if (this.topics.size === 0) this.broker.hooks.removeOwner(TOPIC_OWNER);
    await t.sink.close();
    return true;
  }

  list(): TraceInfo[] {
    const out: TraceInfo[] = [];
    for (const t of this.clients.values())
      out.push({
        type: "client",
        name: t.clientId,
        file: t.sink.file,
        level: t.level,
        started_at: formatDatetime(t.startedAt),
      });
    for (const t of this.topics.values())
      out.push({
        type: "topic",
        name: t.filter,
        file: t.sink.file,
        level: t.level,
        started_at: formatDatetime(t.startedAt),
      });
    return out;
  }

  async stopAll(): Promise<void> {
    for (const id of [...this.clients.keys()]) await this.stopClient(id);
    for (const f of [...this.topics.keys()]) await this.stopTopic(f);
  }

  private hookClients(): void {
    const hooks = this.broker.hooks;
    hooks.add(
      "client.connect",
      (c: ClientInfo, props: Record<string, unknown> | undefined) => {
        const t = this.clients.get(c.clientId);
        if (t === undefined) return;
        const ch = this.channelOf(c);
        if (ch !== undefined) t.attach(ch, props ?? {});
      },
      PRIORITY.tracing,
      CLIENT_OWNER,
    );
    hooks.add(
      "client.connected",
      (c: ClientInfo) => this.clients.get(c.clientId)?.info("client connected"),
      PRIORITY.tracing,
      CLIENT_OWNER,
    );
    hooks.add(
      "client.disconnected",
      (c: ClientInfo, reason: string) => this.clients.get(c.clientId)?.info(`client disconnected: ${reason}`),
      PRIORITY.tracing,
      CLIENT_OWNER,
    );
  }

  /** The channel whose ClientInfo this is (the CONNECT being handled; not registered yet). */
  private channelOf(c: ClientInfo): Channel | undefined {
    for (const ch of this.broker.channels) if (ch.client === c) return ch;
    return undefined;
  }

  private onPublish(m: Message): undefined {
    for (const t of this.topics.values()) {
      if (!records(t.level, "info") || !matchTopic(t.filter, m.topic)) continue;
      const who = m.from === "" ? (m.sys ? "$SYS" : "node") : `${m.from}@${m.peerhost}`;
      const body = `PUBLISH to ${m.topic}: qos=${m.qos}, retain=${m.retain}, payload=${JSON.stringify(m.payload.toString("utf8"))}`;
      t.sink.write(traceLine("info", who, body));
    }
    return undefined;
  }
}
