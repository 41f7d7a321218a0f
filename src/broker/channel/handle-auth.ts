// MQTT 5.0 enhanced authentication (section 4.12): the CONNECT names an Authentication Method,
// then CONNECT/AUTH/AUTH... steps run through the `client.enhanced_auth` hook until a provider
// answers success (CONNACK) or failure. Re-authentication (AUTH 0x19 while connected) uses the
// same hook. With no provider for the method the answer is 0x8C Bad authentication method.

import type { IAuthPacket, IConnectPacket } from "mqtt-packet";
import { RC } from "../../mqtt/reason-codes.ts";
import type { EnhancedAuthResult } from "../hookpoints.ts";
import { M } from "../metrics.ts";
import type { AuthExchange, Channel } from "./channel.ts";
import { afterAuth } from "./open-session.ts";
import { protocolError, refuseConnect } from "./reply.ts";

const NO_METHOD: EnhancedAuthResult = { rc: RC.BAD_AUTHENTICATION_METHOD };
const FAILED: EnhancedAuthResult = { rc: RC.NOT_AUTHORIZED };
/** Failure reason codes a DISCONNECT may carry (MQTT 5.0 section 3.14.2.1). */
const DISCONNECT_FAILURES = new Set([
  0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8b, 0x8d, 0x8e, 0x8f, 0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9a,
  0x9b, 0x9c, 0x9d, 0x9e, 0x9f, 0xa0, 0xa1, 0xa2,
]);

function runStep(
  ch: Channel,
  a: AuthExchange,
  data: Buffer | undefined,
): EnhancedAuthResult | Promise<EnhancedAuthResult> {
  const step = { method: a.method, data, step: a.step, state: a.state };
  return ch.broker.hooks.fold("client.enhanced_auth", [ch.client, step], NO_METHOD, FAILED);
}

export function startEnhancedAuth(
  ch: Channel,
  p: IConnectPacket,
  method: string,
  data: Buffer | undefined,
): void | Promise<void> {
  const a: AuthExchange = { method, state: undefined, step: 0, connect: p };
  ch.auth = a;
  ch.state = "authenticating";
  const r = runStep(ch, a, data);
  if (r instanceof Promise) return r.then((res) => connectStepDone(ch, res));
  return connectStepDone(ch, r);
}

function connectStepDone(ch: Channel, res: EnhancedAuthResult): void | Promise<void> {
  if (ch.state === "disconnected") return;
  const a = ch.auth as AuthExchange;
  a.state = res.state;
  const p = a.connect as IConnectPacket;
  if (res.rc === RC.CONTINUE_AUTHENTICATION) {
    sendAuth(ch, RC.CONTINUE_AUTHENTICATION, res.data);
    return;
  }
  a.connect = null;
  if (res.rc !== RC.SUCCESS) return refuseConnect(ch, res.rc);
  return afterAuth(
    ch,
    p,
    { rc: RC.SUCCESS, superuser: res.superuser === true, by: a.method },
    {
      method: a.method,
      data: res.data,
    },
  );
}

function sendAuth(ch: Channel, rc: number, data: Buffer | undefined): void {
  const properties: IAuthPacket["properties"] = { authenticationMethod: (ch.auth as AuthExchange).method };
  if (data !== undefined) properties.authenticationData = data;
  ch.conn.send({ cmd: "auth", reasonCode: rc, properties });
  ch.broker.metrics.inc(M.authSent);
}

export function handleAuth(ch: Channel, p: IAuthPacket): void | Promise<void> {
  ch.broker.metrics.inc(M.authReceived);
  if (ch.protoVer !== 5) return protocolError(ch, "AUTH on a 3.x connection");
  const method = p.properties?.authenticationMethod;
  // [MQTT-4.12.0-7] / [MQTT-3.15.2-1]: the method must stay the one of the CONNECT.
  const a = ch.auth;
  if (a === null || method !== a.method) return protocolError(ch, "AUTH without or with another method");
  const data = p.properties?.authenticationData;
  if (ch.state === "authenticating") {
    if (p.reasonCode !== RC.CONTINUE_AUTHENTICATION) return protocolError(ch, "unexpected AUTH reason");
    a.step++;
    const r = runStep(ch, a, data);
    if (r instanceof Promise) return r.then((res) => connectStepDone(ch, res));
    return connectStepDone(ch, r);
  }
  if (ch.state !== "connected") return protocolError(ch, "AUTH in a bad state");
  if (p.reasonCode === RC.RE_AUTHENTICATE) a.step = 0;
  else if (p.reasonCode === RC.CONTINUE_AUTHENTICATION) a.step++;
  else return protocolError(ch, "unexpected AUTH reason");
  const r = runStep(ch, a, data);
  if (r instanceof Promise) return r.then((res) => reauthStepDone(ch, res));
  reauthStepDone(ch, r);
}

function reauthStepDone(ch: Channel, res: EnhancedAuthResult): void {
  if (ch.state !== "connected") return;
  (ch.auth as AuthExchange).state = res.state;
  if (res.rc === RC.CONTINUE_AUTHENTICATION) return sendAuth(ch, RC.CONTINUE_AUTHENTICATION, res.data);
  if (res.rc === RC.SUCCESS) return sendAuth(ch, RC.SUCCESS, res.data);
  // [MQTT-4.12.1-2] failed re-authentication ends the connection. CONNACK-only codes (0x86 bad
  // user name or password, 0x8A banned, 0x8C bad method...) are not DISCONNECT reason codes
  // (section 3.14.2.1): those become 0x87 not authorized.
  ch.kick(DISCONNECT_FAILURES.has(res.rc) ? res.rc : RC.NOT_AUTHORIZED, "reauth_failed");
}
