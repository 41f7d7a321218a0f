// CONNECT (MQTT 5.0 section 3.1, 3.1.1 section 3.1): protocol and client id checks, will
// validation, authentication through the hook chain (or the 5.0 AUTH exchange), session open or
// takeover, CONNACK.

import { randomBytes } from "node:crypto";
import type { IConnectPacket } from "mqtt-packet";
import { RC } from "../../mqtt/reason-codes.ts";
import { validateTopicName } from "../../mqtt/topic.ts";
import type { AuthResult, Credentials } from "../hookpoints.ts";
import { M } from "../metrics.ts";
import { InboundAliases, OutboundAliases } from "../session/topic-aliases.ts";
import { makeMessage } from "../types.ts";
import type { Channel } from "./channel.ts";
import { startEnhancedAuth } from "./handle-auth.ts";
import { afterAuth } from "./open-session.ts";
import { protocolError, refuseConnect } from "./reply.ts";

/** The two names the protocol knows as constants: the decoder's copy per CONNECT is not kept. */
function protocolName(id: string | undefined): string {
  if (id === undefined || id === "MQTT") return "MQTT";
  return id === "MQIsdp" ? "MQIsdp" : id;
}

export function handleConnect(ch: Channel, p: IConnectPacket): void | Promise<void> {
  const m = ch.broker.metrics;
  m.inc(M.connectReceived);
  const ver = p.protocolVersion ?? 4;
  ch.protoVer = ver;
  ch.conn.protoVer = ver;
  ch.client.protoVer = ver;
  ch.client.protoName = protocolName(p.protocolId);
  const zone = ch.zone;
  const props = p.properties;
  if (ver === 5) ch.requestProblemInfo = props?.requestProblemInformation !== false;

  // [MQTT-3.1.2-1] protocol name must match the level.
  if ((ver === 3 && p.protocolId !== "MQIsdp") || (ver !== 3 && p.protocolId !== "MQTT")) {
    return refuseConnect(ch, RC.UNSUPPORTED_PROTOCOL_VERSION, "protocol name does not match the level");
  }

  // [MQTT-3.1.2-22] 3.x: a password without a user name is a protocol violation (close, no CONNACK).
  if (ver < 5 && p.password !== undefined && p.username === undefined) {
    ch.broker.metrics.inc(M.connackError);
    return protocolError(ch, "password flag without user name flag");
  }
  // [MQTT-3.1.2-12] will QoS 3 is malformed.
  if (p.will !== undefined && (p.will.qos ?? 0) > 2) return protocolError(ch, "will QoS 3");

  let clientId = p.clientId ?? "";
  if (zone.useUsernameAsClientid && p.username !== undefined && p.username !== "") clientId = p.username;
  if (clientId === "") {
    // 3.1 needs an id; 3.1.1 only with clean session [MQTT-3.1.3-7/8]; 5.0 assigns [MQTT-3.1.3-6].
    if (ver === 3 || (ver === 4 && !p.clean)) return refuseConnect(ch, RC.CLIENT_IDENTIFIER_NOT_VALID);
    clientId = `svc-${randomBytes(8).toString("hex")}`;
  }
  if (Buffer.byteLength(clientId) > zone.maxClientIdLen || (ver === 3 && clientId.length > 23 && zone.strictMode)) {
    return refuseConnect(ch, RC.CLIENT_IDENTIFIER_NOT_VALID, "client identifier too long");
  }
  ch.client.clientId = clientId;
  ch.client.username = p.username;
  ch.client.isBridge = (p as { bridgeMode?: boolean }).bridgeMode === true;
  ch.cleanStart = p.clean !== false;

  // Keepalive: the server's value wins when configured [MQTT-3.2.2-21].
  ch.keepalive = p.keepalive ?? 0;
  if (ver === 5 && zone.serverKeepalive > 0) ch.keepalive = zone.serverKeepalive;

  if (p.will) {
    const w = p.will;
    if (!validateTopicName(w.topic, zone.maxTopicLevels)) {
      return refuseConnect(ch, RC.TOPIC_NAME_INVALID, "invalid will topic");
    }
    const wq = (w.qos ?? 0) as 0 | 1 | 2;
    if (wq > zone.maxQosAllowed) return refuseConnect(ch, RC.QOS_NOT_SUPPORTED, "will QoS not supported");
    if (w.retain && !zone.retainAvailable) return refuseConnect(ch, RC.RETAIN_NOT_SUPPORTED, "retain not supported");
    const wp = w.properties;
    ch.willDelay = wp?.willDelayInterval ?? 0;
    ch.will = makeMessage({
      from: clientId,
      fromUsername: p.username,
      peerhost: ch.client.peerHost,
      topic: w.topic,
      payload: typeof w.payload === "string" ? Buffer.from(w.payload) : w.payload,
      qos: wq,
      retain: w.retain === true,
      properties:
        wp === undefined
          ? undefined
          : {
              payloadFormatIndicator: wp.payloadFormatIndicator,
              messageExpiryInterval: wp.messageExpiryInterval,
              contentType: wp.contentType,
              responseTopic: wp.responseTopic,
              correlationData: wp.correlationData,
              userProperties: wp.userProperties,
            },
    });
  }

  if (ver === 5) {
    ch.clientMaxPacket = props?.maximumPacketSize ?? 0;
    ch.inAliases = new InboundAliases(zone.maxTopicAlias);
    // None when the client takes no aliases: its PUBLISH bytes may then be shared (build-publish.ts).
    const aliasMax = props?.topicAliasMaximum ?? 0;
    ch.outAliases = aliasMax > 0 ? new OutboundAliases(aliasMax) : null;
  }

  ch.broker.hooks.run("client.connect", ch.client, props as Record<string, unknown> | undefined);

  if (ver === 5 && props?.authenticationMethod !== undefined) {
    return startEnhancedAuth(ch, p, props.authenticationMethod, props.authenticationData);
  }

  const creds: Credentials = { username: p.username, password: p.password, authMethod: undefined, authData: undefined };
  const start: AuthResult = zone.allowAnonymous
    ? { rc: RC.SUCCESS, superuser: false, by: "anonymous" }
    : { rc: RC.NOT_AUTHORIZED, superuser: false, by: "anonymous" };
  const denied: AuthResult = { rc: RC.NOT_AUTHORIZED, superuser: false, by: "error" };
  const r = ch.broker.hooks.fold("client.authenticate", [ch.client, creds], start, denied);
  if (r instanceof Promise) {
    ch.state = "authenticating";
    return r.then((res) => afterAuth(ch, p, res, undefined));
  }
  return afterAuth(ch, p, r, undefined);
}
