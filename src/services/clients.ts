// Client views and operations for the API and CLI: list, look up by client id or username, kick.
// Records carry the spec's Client field names (section 2) with values from the live channel and
// its session. Persistent sessions of disconnected clients are listed with connected = false.

import type { Broker } from "../broker/broker.ts";
import type { Channel } from "../broker/channel/channel.ts";
import type { Session } from "../broker/session/session.ts";
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

export class ClientService {
  constructor(private readonly broker: Broker) {}

  /** Every client with a session on this node (connected first, in connection order). */
  list(): ClientRecord[] {
    const out: ClientRecord[] = [];
    for (const s of this.broker.sessions.allSessions())
      out.push(this.record(s, this.broker.sessions.channel(s.clientId)));
    return out;
  }

  lookup(clientId: string): ClientRecord[] {
    const s = this.broker.sessions.lookup(clientId);
    return s === undefined ? [] : [this.record(s, this.broker.sessions.channel(clientId))];
  }

  byUsername(username: string): ClientRecord[] {
    return this.list().filter((c) => c.username === username);
  }

  /** Disconnects a client (5.0: DISCONNECT 0x98) and ends its session; false when unknown. */
  kick(clientId: string): boolean {
    return this.broker.sessions.kick(clientId);
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
