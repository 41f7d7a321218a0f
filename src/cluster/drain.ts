// Graceful drain (SIGTERM/SIGINT): the node leaves without losing what its persistent sessions
// owe. In order:
// 1. not ready: `/status` answers 503 at once (Kubernetes stops sending traffic), and the node's
//    registration says `draining` (other nodes do not send clients here);
// 2. new MQTT connections are refused;
// 3. clients are disconnected: MQTT 5.0 gets DISCONNECT 0x9C "use another server" with a Server
//    Reference to a serving peer (round robin) when the node is clustered, 0x8B "server shutting
//    down" when alone; 3.x connections are closed. Their sessions stay here, offline, and keep
//    queueing what is forwarded to them;
// 4. clustered: the node (link, store, sessions) stays up while the clients reconnect elsewhere
//    and their new nodes claim the sessions (subscriptions and queued messages move with them, see
//    session-handover.ts), until no session is left, the moves are confirmed and the link queues
//    are flushed, or `node.drain_timeout` runs out. A single node does not wait.
// Sessions still here at the end (clients that did not come back in time) end with the node:
// the session handover is pulled by the new owner at CONNECT, so there is no one to push them to;
// they are logged and counted in `session.lost`. The caller then stops the node (deregistering:
// its lease, routes and client registrations go with it).

import type { Broker } from "../broker/broker.ts";
import { M } from "../broker/metrics.ts";
import { RC } from "../mqtt/reason-codes.ts";
import type { Logger } from "../telemetry/logger.ts";
import type { ClusterNode } from "./cluster-node.ts";

export interface DrainDeps {
  broker: Broker;
  cluster: ClusterNode | null;
  /** `/status` answers 503 from now on. */
  setDraining(): void;
  /** New MQTT connections are refused from now on. */
  refuseConnections(): void;
  /** Closes the MQTT listeners. */
  closeListeners(): Promise<void>;
  timeoutMs: number;
  logger: Logger;
  /** Aborted: stop waiting at once (a second signal). */
  signal?: AbortSignal;
}

export interface DrainReport {
  disconnected: number;
  /** Persistent sessions other nodes took over. */
  moved: number;
  /** Sessions still here when the drain ended. */
  lost: number;
  ms: number;
}

const POLL_MS = 50;
/** Longest wait for the disconnected sockets to close before the listeners are closed. */
const CLOSE_WAIT_MS = 2000;

export async function drain(d: DrainDeps): Promise<DrainReport> {
  const started = Date.now();
  const { broker, cluster, logger } = d;
  let persistent = 0;
  for (const s of broker.sessions.allSessions()) if (s.expiryInterval > 0) persistent++;
  d.setDraining();
  d.refuseConnections();
  await cluster?.advertise({ draining: true }).catch(() => {});
  const clustered = cluster?.runningNodes().some((r) => r.node !== broker.nodeName) === true;
  const peers = cluster?.servingPeers() ?? [];
  logger.info(
    { clustered, peers: peers.map((p) => p.node), timeout_ms: d.timeoutMs },
    "draining: disconnecting clients",
  );

  let disconnected = 0;
  let next = 0;
  for (const ch of [...broker.channels]) {
    if (ch.state === "connected") disconnected++;
    if (ch.state === "connected" && ch.protoVer === 5) {
      const ref = peers.length === 0 ? undefined : peers[next++ % peers.length].mqtt;
      ch.conn.send({
        cmd: "disconnect",
        reasonCode: clustered ? RC.USE_ANOTHER_SERVER : RC.SERVER_SHUTTING_DOWN,
        properties: clustered && ref !== undefined ? { serverReference: ref } : undefined,
      });
      broker.metrics.inc(M.disconnectSent);
    }
    ch.close("shutdown");
  }
  await until(() => broker.channels.size === 0, CLOSE_WAIT_MS, d.signal);
  await d.closeListeners();

  if (clustered && cluster !== null) {
    const done = await until(
      () =>
        (broker.sessions.size === 0 && cluster.handoverBacklog() === 0) ||
        !cluster.runningNodes().some((r) => r.node !== broker.nodeName),
      d.timeoutMs,
      d.signal,
    );
    if (!done) logger.warn({ timeout_ms: d.timeoutMs }, "drain: node.drain_timeout reached");
    // What was passed on to the sessions' new owners has reached them before the link closes.
    if (!d.signal?.aborted) await cluster.syncPeers();
  }
  const lost = broker.sessions.size;
  if (lost > 0) {
    broker.metrics.add(M.sessionsLost, lost);
    logger.warn(
      { sessions: lost, clientids: [...broker.sessions.allSessions()].slice(0, 20).map((s) => s.clientId) },
      "drain: sessions not taken over by another node end with this node",
    );
  }
  const report = { disconnected, moved: Math.max(0, persistent - lost), lost, ms: Date.now() - started };
  logger.info(report, "drained");
  return report;
}

/** Resolves true once `pred` holds, false after `ms` or when `signal` aborts. */
function until(pred: () => boolean, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (pred()) return resolve(true);
    if (signal?.aborted) return resolve(false);
    const deadline = Date.now() + ms;
    const timer = setInterval(() => {
      if (pred()) finish(true);
      else if (Date.now() >= deadline) finish(false);
    }, POLL_MS);
    const onAbort = () => finish(false);
    signal?.addEventListener("abort", onAbort, { once: true });
    function finish(v: boolean): void {
      clearInterval(timer);
      signal?.removeEventListener("abort", onAbort);
      resolve(v);
    }
  });
}
