// Client presence on $SYS (the family's presence module): `clients/<clientid>/connected` when a
// client goes online and `.../disconnected` when it goes offline, as JSON with the spec's fields
// (section 6) plus the family's `sockport`, `expiry_interval` and `connected_at`. QoS 0, not
// retained. Hooked on `client.connected` / `client.disconnected`.

import type { Broker } from "../broker/broker.ts";
import type { ConnectedInfo } from "../broker/hookpoints.ts";
import type { ClientInfo } from "../broker/types.ts";
import { PRIORITY } from "../hooks/priorities.ts";
import { publishSys, sysTopic } from "./sys-topics.ts";

export const PRESENCE_OWNER = "svc_sys_presence";

export interface ConnectedPayload {
  clientid: string;
  username: string;
  ipaddress: string;
  connack: number;
  ts: number;
  proto_ver: number;
  proto_name: string;
  clean_start: boolean;
  keepalive: number;
  sockport: number;
  expiry_interval: number;
  connected_at: number;
}

export interface DisconnectedPayload {
  clientid: string;
  username: string;
  reason: string;
  ts: number;
}

export function connectedPayload(c: ClientInfo, info: ConnectedInfo, now = Date.now()): ConnectedPayload {
  return {
    clientid: c.clientId,
    username: c.username ?? "",
    ipaddress: c.peerHost,
    connack: info.connack,
    ts: now,
    proto_ver: c.protoVer,
    proto_name: c.protoName,
    clean_start: info.cleanStart,
    keepalive: info.keepalive,
    sockport: c.sockPort,
    expiry_interval: info.expiryInterval,
    connected_at: info.connectedAt,
  };
}

export function disconnectedPayload(c: ClientInfo, reason: string, now = Date.now()): DisconnectedPayload {
  return { clientid: c.clientId, username: c.username ?? "", reason, ts: now };
}

/**
 * Adds the presence hooks; undo with `broker.hooks.removeOwner(PRESENCE_OWNER)`. A message nobody
 * would hear of (no `$` subscription, no cluster, no callback that acts on system messages:
 * Broker.systemAudience) is not built at all: the two messages were a third of the broker's own
 * work per connection (connect and close) on a node without $SYS subscribers.
 */
export function addPresenceHooks(broker: Broker): void {
  const topic = (c: ClientInfo, what: string) => sysTopic(broker.nodeName, `clients/${c.clientId}/${what}`);
  broker.hooks.add(
    "client.connected",
    (c: ClientInfo, info: ConnectedInfo) => {
      if (broker.systemAudience()) publishSys(broker, topic(c, "connected"), JSON.stringify(connectedPayload(c, info)));
    },
    PRIORITY.sys,
    PRESENCE_OWNER,
  );
  broker.hooks.add(
    "client.disconnected",
    (c: ClientInfo, reason: string) => {
      if (broker.systemAudience())
        publishSys(broker, topic(c, "disconnected"), JSON.stringify(disconnectedPayload(c, reason)));
    },
    PRIORITY.sys,
    PRESENCE_OWNER,
  );
}
