// Completes a CONNECT once authentication has decided (MQTT 5.0 section 3.2): refuse, or open
// (or take over, or resume) the session, send CONNACK with the server's properties, and resend
// what the resumed session still owes.

import type { IConnectPacket } from "mqtt-packet";
import { encodeConnackV3 } from "../../mqtt/fast-codec.ts";
import { RC } from "../../mqtt/reason-codes.ts";
import type { AuthResult } from "../hookpoints.ts";
import { M } from "../metrics.ts";
import type { SessionTransfer } from "../ports.ts";
import type { Channel } from "./channel.ts";
import { refuseConnect } from "./reply.ts";

/** Finishes CONNECT once authentication decided: refuse, or open the session and send CONNACK. */
export function afterAuth(
  ch: Channel,
  p: IConnectPacket,
  res: AuthResult,
  authReply: { method: string; data: Buffer | undefined } | undefined,
): void | Promise<void> {
  if (ch.state === "disconnected") return;
  if (res.rc !== RC.SUCCESS) return refuseConnect(ch, res.rc);
  if (res.by === "anonymous") ch.broker.metrics.inc(M.authAnonymous);
  ch.client.isSuperuser = res.superuser;
  const zone = ch.zone;
  const ver = ch.protoVer;
  const props = p.properties;

  // Session expiry (s): 5.0 from the CONNECT; 3.x persistent sessions use the zone setting.
  const expiry =
    ver === 5 ? (props?.sessionExpiryInterval ?? 0) : ch.cleanStart ? 0 : Math.floor(zone.sessionExpiryInterval / 1000);
  const receiveMaximum = ver === 5 ? (props?.receiveMaximum ?? 65535) : 65535;
  const claim = ch.broker.cluster.claimSession;
  if (claim !== undefined) {
    // Clustered: the client id may own a session on another node; it moves here first. The
    // connection stays paused meanwhile, so packets after CONNECT wait in order.
    ch.state = "authenticating";
    return claim.call(ch.broker.cluster, ch.client.clientId, ch.cleanStart).then(
      (t) => openAndAck(ch, p, expiry, receiveMaximum, authReply, t),
      (err: unknown) => {
        ch.broker.logger.warn({ clientid: ch.client.clientId, err: (err as Error).message }, "session claim failed");
        openAndAck(ch, p, expiry, receiveMaximum, authReply, null);
      },
    );
  }
  openAndAck(ch, p, expiry, receiveMaximum, authReply, null);
}

function openAndAck(
  ch: Channel,
  p: IConnectPacket,
  expiry: number,
  receiveMaximum: number,
  authReply: { method: string; data: Buffer | undefined } | undefined,
  transfer: SessionTransfer | null,
): void {
  if (ch.state === "disconnected") return;
  const zone = ch.zone;
  const ver = ch.protoVer;
  const props = p.properties;
  const { session, present } = ch.broker.sessions.open(ch, ch.cleanStart, expiry, transfer);
  ch.session = session;
  ch.state = "connected";
  ch.connectedAt = Date.now();
  ch.watchKeepalive();

  const m = ch.broker.metrics;
  if (ver === 5) {
    const cp: Record<string, unknown> = {};
    if (ch.client.clientId !== p.clientId && p.clientId === "") cp.assignedClientIdentifier = ch.client.clientId;
    if (zone.serverKeepalive > 0) cp.serverKeepAlive = zone.serverKeepalive;
    if (zone.maxAwaitingRel > 0) cp.receiveMaximum = Math.min(zone.maxAwaitingRel, 65535);
    if (zone.maxQosAllowed < 2) cp.maximumQoS = zone.maxQosAllowed;
    if (!zone.retainAvailable) cp.retainAvailable = false;
    cp.maximumPacketSize = zone.maxPacketSize;
    cp.topicAliasMaximum = zone.maxTopicAlias;
    if (!zone.wildcardSubscription) cp.wildcardSubscriptionAvailable = false;
    if (!zone.sharedSubscription) cp.sharedSubscriptionAvailable = false;
    cp.subscriptionIdentifiersAvailable = true;
    if (props?.requestResponseInformation === true && zone.responseInformation !== "") {
      cp.responseInformation = zone.responseInformation;
    }
    if (authReply !== undefined) {
      cp.authenticationMethod = authReply.method;
      if (authReply.data !== undefined) cp.authenticationData = authReply.data;
    }
    ch.conn.send({ cmd: "connack", reasonCode: RC.SUCCESS, sessionPresent: present, properties: cp });
  } else {
    // [MQTT-3.2.2-1] 3.1.1 session present is 0 for a clean session; 3.1 has no flag.
    ch.conn.sendBytes(encodeConnackV3(ver === 4 && present, 0));
  }
  m.inc(M.connackSent);
  ch.broker.hooks.run("client.connack", ch.client, RC.SUCCESS);
  ch.broker.hooks.run("client.connected", ch.client, {
    cleanStart: ch.cleanStart,
    keepalive: ch.keepalive,
    expiryInterval: expiry,
    connectedAt: ch.connectedAt,
    connack: 0,
    receiveMaximum,
  });
  session.attach(ch, receiveMaximum);
}
