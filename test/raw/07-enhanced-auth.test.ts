// 07-enhanced-auth: the MQTT 5.0 AUTH exchange (section 4.12) through the `client.enhanced_auth`
// hook, with a challenge/response provider registered by the test: CONNECT with a method ->
// AUTH 0x18 challenge -> AUTH 0x18 response -> CONNACK 0 carrying the method; a wrong response ->
// CONNACK 0x87; an unknown method -> CONNACK 0x8C; re-authentication (AUTH 0x19) while connected.

import type { IAuthPacket, IConnackPacket } from "mqtt-packet";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { EnhancedAuthResult, EnhancedAuthStep } from "../../src/broker/hookpoints.ts";
import { RC } from "../../src/mqtt/reason-codes.ts";
import { startTestNode, type TestNode } from "../helpers/node.ts";
import { connectBytes, destroyAll, gen, RawClient } from "./raw-client.ts";

let node: TestNode;
beforeAll(async () => {
  node = await startTestNode();
  // A toy provider: the server challenges with "nonce", the client must answer "nonce:secret".
  node.broker.hooks.add(
    "client.enhanced_auth",
    (_client, step: EnhancedAuthStep, acc: EnhancedAuthResult) => {
      if (step.method !== "TOY") return acc;
      if (step.step === 0) return { rc: RC.CONTINUE_AUTHENTICATION, data: Buffer.from("nonce"), state: "sent" };
      const ok = step.state === "sent" && step.data?.toString() === "nonce:secret";
      return ok ? { rc: RC.SUCCESS, data: Buffer.from("welcome") } : { rc: RC.NOT_AUTHORIZED };
    },
    500,
    "test",
  );
});
afterAll(async () => node?.close());
afterEach(() => destroyAll());

const auth = (rc: number, data?: string): IAuthPacket => ({
  cmd: "auth",
  reasonCode: rc,
  properties: { authenticationMethod: "TOY", ...(data === undefined ? {} : { authenticationData: Buffer.from(data) }) },
});

async function start(clientId: string): Promise<RawClient> {
  const c = await RawClient.open(node.port("tcp"), 5);
  await c.send(connectBytes(5, clientId, { properties: { authenticationMethod: "TOY" } }));
  return c;
}

describe("5.0 enhanced authentication", () => {
  it("completes a challenge/response exchange and then works normally", async () => {
    const c = await start("ea-ok");
    const challenge = (await c.next()) as IAuthPacket;
    expect(challenge.cmd).toBe("auth");
    expect(challenge.reasonCode).toBe(RC.CONTINUE_AUTHENTICATION);
    expect(challenge.properties?.authenticationData?.toString()).toBe("nonce");
    await c.send(gen(5, auth(RC.CONTINUE_AUTHENTICATION, "nonce:secret")));
    const connack = (await c.next()) as IConnackPacket;
    expect(connack.cmd).toBe("connack");
    expect(connack.reasonCode).toBe(0);
    expect(connack.properties?.authenticationMethod).toBe("TOY");
    expect(connack.properties?.authenticationData?.toString()).toBe("welcome");
    await c.send(gen(5, { cmd: "pingreq" }));
    expect((await c.next()).cmd).toBe("pingresp");

    // Re-authentication while connected [MQTT-4.12.1-1].
    await c.send(gen(5, auth(RC.RE_AUTHENTICATE)));
    const again = (await c.next()) as IAuthPacket;
    expect(again.reasonCode).toBe(RC.CONTINUE_AUTHENTICATION);
    await c.send(gen(5, auth(RC.CONTINUE_AUTHENTICATION, "nonce:secret")));
    const done = (await c.next()) as IAuthPacket;
    expect(done.cmd).toBe("auth");
    expect(done.reasonCode).toBe(RC.SUCCESS);
  });

  it("refuses a wrong response with CONNACK 0x87", async () => {
    const c = await start("ea-bad");
    expect((await c.next()).cmd).toBe("auth");
    await c.send(gen(5, auth(RC.CONTINUE_AUTHENTICATION, "guess")));
    const connack = (await c.next()) as IConnackPacket;
    expect(connack.reasonCode).toBe(RC.NOT_AUTHORIZED);
    await c.closed();
  });

  it("refuses an unknown method with CONNACK 0x8C", async () => {
    const c = await RawClient.open(node.port("tcp"), 5);
    await c.send(connectBytes(5, "ea-unknown", { properties: { authenticationMethod: "NOPE" } }));
    const connack = (await c.next()) as IConnackPacket;
    expect(connack.reasonCode).toBe(RC.BAD_AUTHENTICATION_METHOD);
    await c.closed();
  });

  it("treats an AUTH with another method as a protocol error", async () => {
    const c = await start("ea-other");
    expect((await c.next()).cmd).toBe("auth");
    await c.send(
      gen(5, { cmd: "auth", reasonCode: RC.CONTINUE_AUTHENTICATION, properties: { authenticationMethod: "X" } }),
    );
    await c.closed();
  });
});
