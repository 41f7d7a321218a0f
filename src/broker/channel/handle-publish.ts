// Inbound PUBLISH (MQTT 5.0 section 3.3): named checks in order (QoS allowed, retain available,
// topic alias, topic name, QoS 2 packet id / receive maximum, ACL), then the Message goes to
// broker.publish and the acknowledgement carries the outcome.

import type { IPublishPacket } from "mqtt-packet";
import { encodeAck } from "../../mqtt/fast-codec.ts";
import { RC } from "../../mqtt/reason-codes.ts";
import { validateTopicName } from "../../mqtt/topic.ts";
import type { AclResult } from "../hookpoints.ts";
import { M } from "../metrics.ts";
import { type MessageProps, makeMessage, type QoS } from "../types.ts";
import type { Channel } from "./channel.ts";
import { disconnectWith, protocolError } from "./reply.ts";

export function handlePublish(ch: Channel, p: IPublishPacket): void | Promise<void> {
  const m = ch.broker.metrics;
  const zone = ch.zone;
  // Per-connection counters; messages.received, packets.publish.received and
  // messages.qosN.received are derived from them (metrics.ts).
  const c = ch.counters;
  c.recvMsg++;
  if (p.qos === 0) c.recvQos0++;
  else if (p.qos === 1) c.recvQos1++;
  else c.recvQos2++;
  const v5 = ch.protoVer === 5;

  if (p.qos > zone.maxQosAllowed) {
    m.inc(M.publishError);
    return disconnectWith(ch, RC.QOS_NOT_SUPPORTED, "QoS above maximum"); // [MQTT-3.2.2-11]
  }
  if (p.retain && !zone.retainAvailable) {
    m.inc(M.publishError);
    return disconnectWith(ch, RC.RETAIN_NOT_SUPPORTED, "retain not available"); // [MQTT-3.2.2-14]
  }

  let topic = p.topic;
  const alias = p.properties?.topicAlias;
  if (alias !== undefined) {
    if (!v5 || ch.inAliases === null) return protocolError(ch, "topic alias on 3.x");
    const t = ch.inAliases.resolve(alias, topic);
    if (t === "invalid") {
      m.inc(M.publishError);
      return disconnectWith(ch, RC.TOPIC_ALIAS_INVALID, "bad topic alias"); // [MQTT-3.3.2-7..9]
    }
    topic = t;
  }
  // [MQTT-3.3.2-1] 5.0: an empty topic is only allowed with a topic alias.
  if (topic === "") return protocolError(ch, "empty topic without topic alias");
  if (!validateTopicName(topic, zone.maxTopicLevels)) {
    m.inc(M.publishError);
    if (v5 && p.qos > 0) return ack(ch, p, RC.TOPIC_NAME_INVALID);
    return disconnectWith(ch, RC.TOPIC_NAME_INVALID, "invalid topic name"); // [MQTT-3.3.2-2]
  }
  if (p.qos > 0 && (p.messageId === undefined || p.messageId === 0)) return protocolError(ch, "missing packet id");

  if (p.qos === 2) {
    const session = ch.session;
    if (session === null) return;
    const r = session.awaitRel(p.messageId as number);
    if (r === "dup") {
      // Already received and published: only acknowledge again [MQTT-4.3.3-10].
      m.inc(M.pubrecInuse);
      ch.conn.send({ cmd: "pubrec", messageId: p.messageId });
      m.inc(M.pubrecSent);
      return;
    }
    if (r === "full") {
      m.inc(M.publishDropped);
      m.inc(M.qos2Dropped);
      m.inc(M.messagesDropped);
      if (v5) return disconnectWith(ch, RC.RECEIVE_MAXIMUM_EXCEEDED, "awaiting_rel full"); // [MQTT-3.3.4-9]
      return;
    }
  }

  if (ch.client.isSuperuser || ch.broker.hooks.active["client.check_acl"] !== true)
    return publishChecked(ch, p, topic, "allow");
  const acl = ch.broker.hooks.fold3("client.check_acl", ch.client, "publish", topic, "allow" as AclResult, "deny");
  if (acl instanceof Promise) return acl.then((r) => publishChecked(ch, p, topic, r));
  return publishChecked(ch, p, topic, acl);
}

function publishChecked(ch: Channel, p: IPublishPacket, topic: string, acl: AclResult): void | Promise<void> {
  if (ch.state !== "connected") return;
  const m = ch.broker.metrics;
  if (acl === "deny") {
    m.inc(M.publishAuthError);
    m.inc(M.messagesDropped);
    if (p.qos === 2) ch.session?.release(p.messageId as number);
    if (ch.broker.aclDenyDisconnects(ch.client.zone)) return disconnectWith(ch, RC.NOT_AUTHORIZED, "publish denied");
    return ack(ch, p, RC.NOT_AUTHORIZED);
  }
  const pp = p.properties;
  let props: MessageProps | undefined;
  if (pp !== undefined) {
    props = {};
    if (pp.payloadFormatIndicator !== undefined) props.payloadFormatIndicator = pp.payloadFormatIndicator;
    if (pp.messageExpiryInterval !== undefined) props.messageExpiryInterval = pp.messageExpiryInterval;
    if (pp.contentType !== undefined) props.contentType = pp.contentType;
    if (pp.responseTopic !== undefined) props.responseTopic = pp.responseTopic;
    if (pp.correlationData !== undefined) props.correlationData = pp.correlationData;
    if (pp.userProperties !== undefined) props.userProperties = pp.userProperties;
  }
  const msg = makeMessage({
    from: ch.client.clientId,
    fromUsername: ch.client.username,
    peerhost: ch.client.peerHost,
    topic,
    payload: typeof p.payload === "string" ? Buffer.from(p.payload) : p.payload,
    qos: p.qos as QoS,
    retain: p.retain,
    properties: props,
  });
  const n = ch.broker.publish(msg, true);
  const congested = ch.broker.congested;
  if (p.qos === 0) {
    // Ingress back-pressure without an acknowledgement to hold (a subscriber's socket or a link to
    // another node that does not keep up): this connection reads nothing more until it has caught up.
    return congested === null ? undefined : new Promise<void>((resume) => congested.holdAck(resume));
  }
  const rc = n === 0 && ch.protoVer === 5 ? RC.NO_MATCHING_SUBSCRIBERS : RC.SUCCESS;
  if (congested !== null && congested !== ch.session) {
    // Ingress back-pressure: acknowledge once the congested subscriber has caught up. The held
    // acknowledgement keeps the packet id only, not the packet: its payload is a view of a socket
    // read buffer, which it would keep alive for as long as the hold lasts.
    const qos = p.qos;
    const pid = p.messageId as number;
    congested.holdAck(() => {
      if (ch.state === "connected") sendAck(ch, qos, pid, rc);
    });
    return;
  }
  ack(ch, p, rc);
}

/** PUBACK (QoS 1) or PUBREC (QoS 2) with a reason code for 5.0 [MQTT-3.4.2-1]. */
function ack(ch: Channel, p: IPublishPacket, rc: number): void {
  if (p.qos !== 0) sendAck(ch, p.qos, p.messageId as number, rc);
}

function sendAck(ch: Channel, qos: 1 | 2, pid: number, rc: number): void {
  const m = ch.broker.metrics;
  const v5 = ch.protoVer === 5;
  if (qos === 1) {
    ch.conn.sendBytes(encodeAck(4, pid, rc, v5));
    m.inc(M.pubackSent);
  } else {
    ch.conn.sendBytes(encodeAck(5, pid, rc, v5));
    m.inc(M.pubrecSent);
  }
}
