// Assertions for "the broker closed this connection because of what we sent".

import type { IDisconnectPacket, Packet } from "mqtt-packet";
import { expect } from "vitest";
import type { RawClient } from "./raw-client.ts";

/** Closed, and nothing at all was sent after the point of the bad input (3.x). */
export async function expectClosedSilently(c: RawClient): Promise<void> {
  const rest = await c.closed();
  expect(rest.map((p) => p.cmd)).toEqual([]);
}

/** Closed after exactly one DISCONNECT with reason `rc` (5.0 server-initiated disconnect). */
export async function expectDisconnect(c: RawClient, rc: number): Promise<void> {
  const rest = await c.closed();
  expect(rest.map((p) => p.cmd)).toEqual(["disconnect"]);
  expect((rest[0] as IDisconnectPacket).reasonCode).toBe(rc);
}

/**
 * Closed; for 5.0 a DISCONNECT before the close is allowed (MQTT 5.0 section 4.13: the server MAY
 * send one) and, when sent, must carry one of `allowed` (error codes, >= 0x80).
 */
export async function expectErrorClose(c: RawClient, allowed: number[]): Promise<Packet[]> {
  const rest = await c.closed();
  if (c.ver !== 5) {
    expect(rest.map((p) => p.cmd)).toEqual([]);
    return rest;
  }
  expect(rest.length).toBeLessThanOrEqual(1);
  if (rest.length === 1) {
    expect(rest[0].cmd).toBe("disconnect");
    expect(allowed).toContain((rest[0] as IDisconnectPacket).reasonCode);
  }
  return rest;
}
