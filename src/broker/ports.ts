// Interfaces the core owns and the outside implements: the cluster forwards messages to other
// nodes through ClusterPort, and learns local route changes through RouteListener (router.ts).
// On a single node the NullCluster forwards nothing.

import type { Message, QoS, SubOpts } from "./types.ts";

/**
 * Something that can hold back publishers' acknowledgements until it has caught up: a congested
 * subscriber session, or the link to a node whose queue is full (ingress back-pressure).
 */
export interface AckHolder {
  holdAck(release: () => void): void;
}

/** A session moving from one node to another (a client id connected elsewhere). */
export interface SessionTransfer {
  expiryInterval: number;
  subscriptions: [string, SubOpts][];
  /** Messages still owed to the client, oldest first (unacknowledged ones are sent again). */
  pending: { msg: Message; qos: QoS; opts: SubOpts; retained: boolean }[];
}

export interface ClusterPort {
  /** Sends `msg` to every other node with a matching route; returns how many nodes. */
  forward(msg: Message): number;
  /**
   * Before a session opens here: if another node holds this client id's session, it takes it
   * away from there (kicking that connection) and hands it over (null when none, or when
   * `cleanStart` discards it).
   */
  claimSession?(clientId: string, cleanStart: boolean): Promise<SessionTransfer | null>;
}

export const NullCluster: ClusterPort = {
  forward: () => 0,
};
