// Client views and operations for the API and CLI: list (with the filters of emqx-facts §3.2),
// look up by client id or username, kick, the ACL cache. Records carry the spec's Client field
// names (section 2) with values from the live channel and its session. Persistent sessions of
// disconnected clients are listed with connected = false.
//
// The synchronous methods answer for this node; the async `find*`, `kickAnywhere` and
// `*Anywhere` ones answer for the cluster (or one node) through ClusterCalls: each node runs the
// filters on its own clients and answers its count and the rows a page needs; the lists are
// concatenated in node-name order, each node's rows in its own order, then paged.

import type { Broker } from "../broker/broker.ts";
import type { Channel } from "../broker/channel/channel.ts";
import type { Session } from "../broker/session/session.ts";
import type { ClientInfo } from "../broker/types.ts";
import {
  type ClusterCalls,
  fromEvery,
  type PageArgs,
  type PageOf,
  pageFrom,
  partOf,
  type Window,
} from "./cluster-calls.ts";
import { formatDatetime } from "./format.ts";

export interface ClientRecord {
  clientid: string;
  username: string;
  node: string;
  proto_name: string;
  ip_address: string;
  zone: string;
  port: number;
  proto_ver: number;
  keepalive: number;
  expiry_interval: number;
  clean_start: boolean;
  is_bridge: boolean;
  connected: boolean;
  created_at: string;
  connected_at: string;
  recv_cnt: number;
  recv_pkt: number;
  recv_msg: number;
  recv_oct: number;
  send_cnt: number;
  send_pkt: number;
  send_msg: number;
  send_oct: number;
  mqueue_len: number;
  max_mqueue: number;
  mqueue_dropped: number;
  mailbox_len: number;
  heap_size: number;
  reductions: number;
  inflight: number;
  max_inflight: number;
  awaiting_rel: number;
  max_awaiting_rel: number;
  subscriptions_cnt: number;
  max_subscriptions: number;
}

/** `/clients` filters (emqx-facts §3.2); times are seconds since the epoch. */
export interface ClientQuery {
  clientid?: string;
  username?: string;
  zone?: string;
  ip_address?: string;
  conn_state?: "connected" | "disconnected" | "idle";
  clean_start?: boolean;
  proto_name?: string;
  proto_ver?: number;
  like_clientid?: string;
  like_username?: string;
  gte_created_at?: number;
  lte_created_at?: number;
  gte_connected_at?: number;
  lte_connected_at?: number;
  gte_mqueue_len?: number;
  lte_mqueue_len?: number;
  gte_mqueue_dropped?: number;
  lte_mqueue_dropped?: number;
}

/** Spec 000 §2 "ACL cache entry". */
export interface AclCacheEntry {
  access: string;
  result: string;
  topic: string;
  updated_time: number;
}

/** Where the ACL caches of connections are kept (the ACL feature's AclCaches). */
export interface AclCacheStore {
  entries(client: ClientInfo): AclCacheEntry[];
  clear(client: ClientInfo): void;
}

export class ClientService {
  constructor(
    private readonly broker: Broker,
    private readonly aclCaches: AclCacheStore | undefined,
    private readonly calls: ClusterCalls,
  ) {
    const id = (a: unknown): string => (a as { clientid: string }).clientid;
    calls.register("mgmt.clients", (a) => {
      const { q, w, exact } = a as PageArgs<ClientQuery>;
      return partOf(this.matching(q), w, (s) => this.record(s, this.broker.sessions.channel(s.clientId)), exact);
    });
    calls.register("mgmt.client", (a) => this.lookup(id(a)));
    calls.register("mgmt.clientsByUsername", (a) => this.byUsername((a as { username: string }).username));
    calls.register("mgmt.kick", (a) => this.kick(id(a)));
    calls.register("mgmt.aclCache", (a) => this.aclCache(id(a)) ?? null);
    calls.register("mgmt.clearAclCache", (a) => this.clearAclCache(id(a)));
  }

  /** A page of the clients matching `q`, in the cluster or on `node`, with the total count. */
  findPage(q: ClientQuery, w: Window, node?: string): Promise<PageOf<ClientRecord>> {
    return pageFrom(this.calls, "mgmt.clients", q, w, node);
  }

  /** The client's record (at most one: client ids are unique), in the cluster or on `node`. */
  find(clientId: string, node?: string): Promise<ClientRecord[]> {
    return this.gather("mgmt.client", { clientid: clientId }, node);
  }

  /** Clients with `username`, in the cluster or on `node`. */
  findByUsername(username: string, node?: string): Promise<ClientRecord[]> {
    return this.gather("mgmt.clientsByUsername", { username }, node);
  }

  /** Kicks the client wherever it is (every node is asked); false when no node has it. */
  async kickAnywhere(clientId: string): Promise<boolean> {
    const answers = await fromEvery<boolean>(this.calls, "mgmt.kick", { clientid: clientId });
    return answers.some((a) => a.value);
  }

  /** The ACL cache of the client on whichever node it is connected to; undefined when offline. */
  async aclCacheAnywhere(clientId: string): Promise<AclCacheEntry[] | undefined> {
    const answers = await fromEvery<AclCacheEntry[] | null>(this.calls, "mgmt.aclCache", { clientid: clientId });
    return answers.find((a) => a.value !== null)?.value ?? undefined;
  }

  /** Clears the client's ACL cache wherever it is connected; false when it is not online. */
  async clearAclCacheAnywhere(clientId: string): Promise<boolean> {
    const answers = await fromEvery<boolean>(this.calls, "mgmt.clearAclCache", { clientid: clientId });
    return answers.some((a) => a.value);
  }

  private async gather(method: string, args: unknown, node: string | undefined): Promise<ClientRecord[]> {
    if (node !== undefined) return this.calls.call<ClientRecord[]>(node, method, args);
    return (await fromEvery<ClientRecord[]>(this.calls, method, args)).flatMap((a) => a.value);
  }

  /** Every client with a session on this node (connected first, in connection order). */
  list(): ClientRecord[] {
    return this.recordsOf({});
  }

  /** The records of the clients matching `q`, in list order. */
  private recordsOf(q: ClientQuery): ClientRecord[] {
    return Array.from(this.matching(q), (s) => this.record(s, this.broker.sessions.channel(s.clientId)));
  }

  /** The sessions of the clients matching every given filter, in list order. */
  private *matching(q: ClientQuery): Generator<Session> {
    const sessions = this.broker.sessions;
    if (q.clientid !== undefined) {
      // A client id names one session at most: no walk over all of them.
      const s = sessions.lookup(q.clientid);
      if (s !== undefined && matches(q, s, sessions.channel(s.clientId))) yield s;
      return;
    }
    for (const s of sessions.allSessions()) if (matches(q, s, sessions.channel(s.clientId))) yield s;
  }

  lookup(clientId: string): ClientRecord[] {
    const s = this.broker.sessions.lookup(clientId);
    return s === undefined ? [] : [this.record(s, this.broker.sessions.channel(clientId))];
  }

  byUsername(username: string): ClientRecord[] {
    return this.recordsOf({ username });
  }

  /** Disconnects a client (5.0: DISCONNECT 0x98) and ends its session; false when unknown. */
  kick(clientId: string): boolean {
    return this.broker.sessions.kick(clientId);
  }

  /** The ACL decisions cached for a connected client, oldest first; undefined when it is not online. */
  aclCache(clientId: string): AclCacheEntry[] | undefined {
    const ch = this.broker.sessions.channel(clientId);
    if (ch === undefined) return undefined;
    return this.aclCaches?.entries(ch.client) ?? [];
  }

  /** Clears a connected client's ACL cache; false when it is not online. */
  clearAclCache(clientId: string): boolean {
    const ch = this.broker.sessions.channel(clientId);
    if (ch === undefined) return false;
    this.aclCaches?.clear(ch.client);
    return true;
  }

  private record(s: Session, ch: Channel | undefined): ClientRecord {
    const c = s.client;
    const z = s.zone;
    const k = ch?.counters;
    return {
      clientid: c.clientId,
      username: c.username ?? "",
      node: this.broker.nodeName,
      proto_name: c.protoName,
      ip_address: c.peerHost,
      zone: c.zone,
      port: c.peerPort,
      proto_ver: c.protoVer,
      keepalive: ch?.keepalive ?? 0,
      expiry_interval: s.expiryInterval,
      clean_start: ch?.cleanStart ?? false,
      is_bridge: c.isBridge,
      connected: ch !== undefined,
      created_at: formatDatetime(s.createdAt),
      connected_at: formatDatetime(ch?.connectedAt ?? s.createdAt),
      recv_cnt: k?.recvPkt ?? 0,
      recv_pkt: k?.recvPkt ?? 0,
      recv_msg: k?.recvMsg ?? 0,
      recv_oct: k?.recvOct ?? 0,
      send_cnt: k?.sendPkt ?? 0,
      send_pkt: k?.sendPkt ?? 0,
      send_msg: k?.sendMsg ?? 0,
      send_oct: k?.sendOct ?? 0,
      mqueue_len: s.mqueue.length,
      max_mqueue: z.maxMqueueLen,
      mqueue_dropped: s.mqueueDropped,
      mailbox_len: 0,
      heap_size: 0,
      reductions: 0,
      inflight: s.inflight.size,
      max_inflight: s.maxInflight,
      awaiting_rel: s.awaitingRel.size,
      max_awaiting_rel: z.maxAwaitingRel,
      subscriptions_cnt: s.subscriptions.size,
      max_subscriptions: z.maxSubscriptions,
    };
  }
}

function matches(q: ClientQuery, s: Session, ch: Channel | undefined): boolean {
  const c = s.client;
  const username = c.username ?? "";
  if (q.clientid !== undefined && c.clientId !== q.clientid) return false;
  if (q.username !== undefined && username !== q.username) return false;
  if (q.zone !== undefined && c.zone !== q.zone) return false;
  if (q.ip_address !== undefined && c.peerHost !== q.ip_address) return false;
  if (q.conn_state !== undefined) {
    // A session exists only after CONNECT: no listed client is idle.
    const state = ch === undefined ? "disconnected" : "connected";
    if (state !== q.conn_state) return false;
  }
  if (q.clean_start !== undefined && (ch?.cleanStart ?? false) !== q.clean_start) return false;
  if (q.proto_name !== undefined && c.protoName !== q.proto_name) return false;
  if (q.proto_ver !== undefined && c.protoVer !== q.proto_ver) return false;
  if (q.like_clientid !== undefined && !c.clientId.includes(q.like_clientid)) return false;
  if (q.like_username !== undefined && !username.includes(q.like_username)) return false;
  const created = s.createdAt / 1000;
  const connected = (ch?.connectedAt ?? s.createdAt) / 1000;
  return (
    within(created, q.gte_created_at, q.lte_created_at) &&
    within(connected, q.gte_connected_at, q.lte_connected_at) &&
    within(s.mqueue.length, q.gte_mqueue_len, q.lte_mqueue_len) &&
    within(s.mqueueDropped, q.gte_mqueue_dropped, q.lte_mqueue_dropped)
  );
}

function within(v: number, gte: number | undefined, lte: number | undefined): boolean {
  return (gte === undefined || v >= gte) && (lte === undefined || v <= lte);
}
