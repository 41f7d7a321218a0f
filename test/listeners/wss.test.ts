// Secure WebSocket listener: certificate from files, MQTT sub-protocol, client certificates.
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createListener } from "../../src/listeners/create-listener.ts";
import type { Listener } from "../../src/listeners/listener.ts";
import type { ListenerSettings } from "../../src/listeners/types.ts";
import {
  captureLogger,
  Fleet,
  listenerSettings,
  makePki,
  type Pki,
  recordingHandler,
  writeServerFiles,
} from "./helpers.ts";
import { collect, openWs, outcome } from "./ws-client.ts";

const fleet = new Fleet();
afterEach(() => fleet.cleanup());

let pki: Pki;
beforeAll(async () => {
  pki = await makePki();
});

async function wssListener(
  overrides: Partial<ListenerSettings> = {},
): Promise<{ listener: Listener; rec: ReturnType<typeof recordingHandler>; url: string }> {
  const files = await writeServerFiles(await fleet.tempDir(), pki);
  const rec = recordingHandler({ echo: true });
  const listener = await fleet.start(
    createListener(listenerSettings("wss", { ...files, ...overrides }), rec.handler, {
      dataDir: await fleet.tempDir(),
      logger: captureLogger(),
    }),
  );
  return { listener, rec, url: `wss://127.0.0.1:${listener.port}/mqtt` };
}

describe("wss listener", () => {
  it("upgrades over TLS with the mqtt sub-protocol and streams bytes", async () => {
    const { listener, rec, url } = await wssListener();
    const client = openWs(fleet, url, ["mqttv3.1.1"], { ca: pki.ca.cert });
    expect(await outcome(client)).toEqual({ open: true, protocol: "mqttv3.1.1" });
    const conn = await rec.next();
    expect(conn.info).toMatchObject({
      listener: "mqtt:wss:test",
      protocol: "mqtt:wss",
      peerHost: "127.0.0.1",
      sockPort: listener.port,
    });
    expect(conn.info.peerCert).toBeUndefined();

    const packet = Buffer.from([0xc0, 0x00]);
    const echoed = collect(client, packet.length);
    client.send(packet);
    expect((await echoed).bytes.equals(packet)).toBe(true);
    expect(listener.info()).toMatchObject({
      protocol: "mqtt:wss",
      identifier: "mqtt:wss:test",
      current_conns: 1,
    });
  });

  it("refuses the wrong path", async () => {
    const { listener, rec } = await wssListener();
    const client = openWs(fleet, `wss://127.0.0.1:${listener.port}/`, "mqtt", { ca: pki.ca.cert });
    expect(await outcome(client)).toEqual({ open: false, status: 404 });
    expect(rec.accepted).toHaveLength(0);
  });

  it("verify_peer + fail_if_no_peer_cert: refuses a client without a certificate, reports a valid one", async () => {
    const { url, rec } = await wssListener({ verify: "verify_peer", failIfNoPeerCert: true });
    expect((await outcome(openWs(fleet, url, "mqtt", { ca: pki.ca.cert }))).open).toBe(false);
    expect((await outcome(openWs(fleet, url, "mqtt", { ca: pki.ca.cert, ...pki.stranger }))).open).toBe(false);
    expect(rec.accepted).toHaveLength(0);

    const client = openWs(fleet, url, "mqtt", { ca: pki.ca.cert, ...pki.client });
    expect(await outcome(client)).toEqual({ open: true, protocol: "mqtt" });
    const conn = await rec.next();
    expect(conn.info.peerCert?.cn).toBe("client-1");
  });
});
