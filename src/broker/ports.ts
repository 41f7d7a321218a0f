// Interfaces the core owns and the outside implements: the cluster forwards messages to other
// nodes through ClusterPort, and learns local route changes through RouteListener (router.ts).
// On a single node the NullCluster forwards nothing.

import type { Message } from "./types.ts";

export interface ClusterPort {
  /** Sends `msg` to every other node with a matching route; returns how many nodes. */
  forward(msg: Message): number;
}

export const NullCluster: ClusterPort = {
  forward: () => 0,
};
