// Session views (the legacy v2 API's `/sessions`, spec 001 §2 "Session"): the delivery state of
// each session on this node, connected or parked. Figures come from the session itself:
// `inflight` is the outgoing window, `awaiting_ack` its QoS 1/2 entries still waiting for
// PUBACK/PUBREC, `awaiting_comp` the QoS 2 entries waiting for PUBCOMP, `awaiting_rel` the
// incoming QoS 2 messages waiting for PUBREL. `findPage`/`find` answer for the cluster or one
// node through ClusterCalls (`mgmt.sessions`, `mgmt.session`).

import type { Broker } from "../broker/broker.ts";
import type { Session } from "../broker/session/session.ts";
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

export interface SessionRecord {
  clientid: string;
  clean_start: boolean;
  max_inflight: number;
  inflight: number;
  mqueue_len: number;
  mqueue_dropped: number;
  awaiting_rel: number;
  awaiting_ack: number;
  awaiting_comp: number;
  created_at: string;
}

export class SessionService {
  constructor(
    private readonly broker: Broker,
    private readonly calls: ClusterCalls,
  ) {
    calls.register("mgmt.sessions", (a) => {
      const { w, exact } = a as PageArgs<null>;
      return partOf(this.broker.sessions.allSessions(), w, (s) => this.record(s), exact);
    });
    calls.register("mgmt.session", (a) => this.lookup((a as { clientid: string }).clientid));
  }

  /** A page of the sessions of the cluster or of `node`, with the total count. */
  findPage(w: Window, node?: string): Promise<PageOf<SessionRecord>> {
    return pageFrom(this.calls, "mgmt.sessions", null, w, node);
  }

  /** A client's session, in the cluster or on `node`. */
  async find(clientId: string, node?: string): Promise<SessionRecord[]> {
    const args = { clientid: clientId };
    if (node !== undefined) return this.calls.call<SessionRecord[]>(node, "mgmt.session", args);
    return (await fromEvery<SessionRecord[]>(this.calls, "mgmt.session", args)).flatMap((a) => a.value);
  }

  list(): SessionRecord[] {
    return [...this.broker.sessions.allSessions()].map((s) => this.record(s));
  }

  lookup(clientId: string): SessionRecord[] {
    const s = this.broker.sessions.lookup(clientId);
    return s === undefined ? [] : [this.record(s)];
  }

  private record(s: Session): SessionRecord {
    let ack = 0;
    let comp = 0;
    for (const e of s.inflight.values()) {
      if (e.phase === 1) ack++;
      else comp++;
    }
    return {
      clientid: s.clientId,
      clean_start: this.broker.sessions.channel(s.clientId)?.cleanStart ?? false,
      max_inflight: s.maxInflight,
      inflight: s.inflight.size,
      mqueue_len: s.mqueue.length,
      mqueue_dropped: s.mqueueDropped,
      awaiting_rel: s.awaitingRel.size,
      awaiting_ack: ack,
      awaiting_comp: comp,
      created_at: formatDatetime(s.createdAt),
    };
  }
}
