// SSL listener: certificates from files, TLS versions, client-certificate verification.
import { once } from "node:events";
import { type ConnectionOptions, connect, type TLSSocket } from "node:tls";
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
  settled,
  writeServerFiles,
} from "./helpers.ts";

const fleet = new Fleet();
afterEach(() => fleet.cleanup());

let pki: Pki;
beforeAll(async () => {
  pki = await makePki();
});

async function sslListener(
  overrides: Partial<ListenerSettings>,
  echo = true,
): Promise<{ listener: Listener; rec: ReturnType<typeof recordingHandler> }> {
  const files = await writeServerFiles(await fleet.tempDir(), pki);
  const rec = recordingHandler({ echo });
  const settings = listenerSettings("ssl", { ...files, ...overrides });
  const listener = await fleet.start(
    createListener(settings, rec.handler, {
      dataDir: await fleet.tempDir(),
      logger: captureLogger(),
    }),
  );
  return { listener, rec };
}

function dial(port: number, extra: ConnectionOptions = {}): TLSSocket {
  return fleet.own(connect({ host: "127.0.0.1", port, servername: "localhost", ca: pki.ca.cert, ...extra }));
}

/** True when the server kept the connection (it echoes), false when it dropped it. */
async function survives(socket: TLSSocket): Promise<boolean> {
  const closed = settled(socket, "close").then(() => false);
  const echoed = settled(socket, "secureConnect").then(async () => {
    socket.write("ping");
    await settled(socket, "data");
    return true;
  });
  return Promise.race([closed, echoed]);
}

describe("ssl listener", () => {
  it("serves the configured certificate and hands the TLS socket over", async () => {
    const { listener, rec } = await sslListener({});
    const client = dial(listener.port);
    expect(await survives(client)).toBe(true);
    const conn = await rec.next();
    expect(conn.info).toMatchObject({
      listener: "mqtt:ssl:test",
      protocol: "mqtt:ssl",
      peerHost: "127.0.0.1",
      sockPort: listener.port,
    });
    expect(conn.info.peerCert).toBeUndefined();
    expect(client.authorized).toBe(true);
    expect(listener.info()).toMatchObject({
      protocol: "mqtt:ssl",
      acceptors: 16,
      current_conns: 1,
    });
  });

  it("limits the protocol to the configured TLS versions", async () => {
    const { listener } = await sslListener({ tlsVersions: ["tlsv1.2"] });
    const client = dial(listener.port);
    await once(client, "secureConnect");
    expect(client.getProtocol()).toBe("TLSv1.2");

    const tooNew = dial(listener.port, { minVersion: "TLSv1.3" });
    expect(await survives(tooNew)).toBe(false);
  });

  describe("verify_peer with fail_if_no_peer_cert", () => {
    const policy = { verify: "verify_peer", failIfNoPeerCert: true } as const;

    it("refuses a client without a certificate", async () => {
      const { listener, rec } = await sslListener(policy);
      expect(await survives(dial(listener.port))).toBe(false);
      expect(rec.accepted).toHaveLength(0);
    });

    it("accepts a client certificate signed by the CA and reports its subject", async () => {
      const { listener, rec } = await sslListener(policy);
      expect(await survives(dial(listener.port, pki.client))).toBe(true);
      const conn = await rec.next();
      expect(conn.info.peerCert?.cn).toBe("client-1");
      expect(conn.info.peerCert?.dn).toContain("CN=client-1");
      expect(conn.info.peerCert?.dn).toContain("O=svc-test");
    });

    it("refuses a client certificate from an untrusted CA", async () => {
      const { listener, rec } = await sslListener(policy);
      expect(await survives(dial(listener.port, pki.stranger))).toBe(false);
      expect(rec.accepted).toHaveLength(0);
    });
  });

  describe("verify_peer without fail_if_no_peer_cert", () => {
    const policy = { verify: "verify_peer", failIfNoPeerCert: false } as const;

    it("accepts a client without a certificate", async () => {
      const { listener, rec } = await sslListener(policy);
      expect(await survives(dial(listener.port))).toBe(true);
      expect((await rec.next()).info.peerCert).toBeUndefined();
    });

    it("still refuses a presented certificate that does not verify", async () => {
      const { listener, rec } = await sslListener(policy);
      expect(await survives(dial(listener.port, pki.stranger))).toBe(false);
      expect(rec.accepted).toHaveLength(0);
    });
  });
});
